// What `topo demo --autopilot` prints: the repository as a person watching it sees it after each
// monitor pass (the bot's pull requests with their round, their decision's check run, their merge or
// close; the dashboard's rounds, GPU-hours, best and conclusion; the replies to its commands), and
// the lines that say what changed since the pass before. Pure: the demo reads the local GitHub API's
// state into a HubView (./autopilot.ts), narrate compares two.

/** One bot pull request as a person sees it. */
export interface PullView {
  number: number;
  candidate: string;
  /** 0: the baseline's pull request; null when its marker is gone. */
  round: number | null;
  state: 'open' | 'closed' | 'merged';
  hypothesis: string | null;
  /** The `topo/monitor` check run's title once it concluded (the decision, against its reference). */
  decision: string | null;
  /** The first line of the bot's closing comment. */
  closing: string | null;
}

/** One row of the dashboard's table: a run at the figure its judgement gives it. */
export interface DashboardRow {
  round: string;
  name: string;
  /** Its job of the candidate: 2 and on for a rerun in a later round (1: the first). */
  attempt: number;
  decision: string;
  /** s/rollout as the dashboard shows it (null: none yet). */
  seconds: number | null;
}

export interface HubView {
  pulls: PullView[];
  dashboard: { number: number; open: boolean; body: string } | null;
  /** The bot's replies on the dashboard, oldest first. */
  replies: string[];
  /** The final report is posted on the dashboard. */
  reported: boolean;
}

export const EMPTY_HUB: HubView = { pulls: [], dashboard: null, replies: [], reported: false };

/** The dashboard's table rows (src/autopilot/dashboard.ts renderDashboard). */
export function dashboardRows(body: string): DashboardRow[] {
  const rows: DashboardRow[] = [];
  for (const line of body.split('\n')) {
    const m =
      /^\| ([^|]+) \| `([^`]+)`(?: \(attempt (\d+)\))? \| [^|]+ \| ([^|]+) \| ([^|]+) \| [^|]+ \|$/.exec(
        line,
      );
    if (!m || m[1] === 'round') continue;
    const seconds = Number(m[5]);
    rows.push({
      round: (m[1] as string).trim(),
      name: m[2] as string,
      attempt: Number(m[3] ?? 1),
      decision: (m[4] as string).trim(),
      seconds: Number.isFinite(seconds) ? seconds : null,
    });
  }
  return rows;
}

/** `**GPU-hours:** 12.3 spent, … left of 150.0.` → "12.3 of 150.0 GPU-hours spent". */
export function gpuHoursLine(body: string): string | null {
  const m =
    /\*\*GPU-hours:\*\* ([\d.]+) spent, ([\d.]+) committed to live runs, [\d.]+ left of ([\d.]+)\./.exec(
      body,
    );
  return m ? `GPU-hours: ${m[1]} of ${m[3]} spent (${m[2]} committed to live runs)` : null;
}

/** The dashboard's best-so-far line without its Markdown. */
export function bestLine(body: string): string | null {
  const m = /\*\*Best so far:\*\* (.+)/.exec(body);
  return m ? (m[1] as string).replace(/`/g, '') : null;
}

/** The dashboard's conclusion line without its Markdown, once there is one. */
export function concludedLine(body: string): string | null {
  const m = /\*\*Concluded:\*\* (.+)/.exec(body);
  return m
    ? (m[1] as string)
        .replace(/`/g, '')
        .replace(/\\/g, '')
        .replace(/\u200b/g, '')
    : null;
}

function seconds(rows: readonly DashboardRow[], name: string): string {
  const s = rows.find((r) => r.name === name)?.seconds;
  return s === null || s === undefined ? '' : ` at ${s.toFixed(2)} s/rollout`;
}

/**
 * The candidate's own decision in its `topo/monitor` check run's title: a pull request that also runs
 * the round's reference job titles both ("2 candidates: a: …; best: …"), and only `a`'s is its decision.
 */
export function decisionOf(title: string, candidate: string): string {
  const many = /^\d+ candidates: (.*)$/.exec(title);
  if (!many) return title;
  const own = (many[1] as string).split('; ').find((part) => part.startsWith(`${candidate}: `));
  return own ? own.slice(candidate.length + 2) : title;
}

/**
 * A round that opens with reruns only has no pull request of its own (each rerun stays on its first
 * round's): the dashboard's rows name it. Its header and its reruns, once.
 */
function rerunRounds(prev: HubView, rows: readonly DashboardRow[], rounds: Set<number | null>): string[] {
  const before = new Set((prev.dashboard ? dashboardRows(prev.dashboard.body) : []).map((r) => r.round));
  const out: string[] = [];
  for (const r of rows) {
    const n = Number(r.round);
    if (!Number.isInteger(n) || n < 1 || before.has(r.round)) continue;
    if (!rounds.has(n)) {
      rounds.add(n);
      out.push(`round ${n}`);
    }
    if (r.attempt > 1)
      out.push(`  \`${r.name}\` again (attempt ${r.attempt}): held, rerun beside the round's reference`);
  }
  return out;
}

/** What changed between two passes, as lines a person reads: rounds, proposals, decisions, merges, the conclusion. */
export function narrate(prev: HubView, next: HubView): string[] {
  const out: string[] = [];
  const rows = next.dashboard ? dashboardRows(next.dashboard.body) : [];
  const before = new Map(prev.pulls.map((p) => [p.number, p]));
  const rounds = new Set(prev.pulls.map((p) => p.round));
  for (const p of next.pulls) {
    const was = before.get(p.number);
    if (!was) {
      if (!rounds.has(p.round)) {
        rounds.add(p.round);
        out.push(p.round === 0 ? 'baseline' : `round ${p.round}`);
        const best = next.dashboard ? bestLine(next.dashboard.body) : null;
        if (p.round !== 0 && best) out.push(`  from the current best: ${best}`);
      }
      out.push(`  #${p.number} ${p.candidate}: ${p.hypothesis ?? 'proposed'}`);
    }
    const decision = p.decision ? decisionOf(p.decision, p.candidate) : null;
    if (decision && decision !== (was?.decision ? decisionOf(was.decision, p.candidate) : null))
      out.push(`  #${p.number} ${p.candidate}: ${decision}${seconds(rows, p.candidate)}`);
    if (p.state !== (was?.state ?? 'open'))
      out.push(
        p.state === 'merged'
          ? `  #${p.number} ${p.candidate}: merged into the default branch and recorded`
          : `  #${p.number} ${p.candidate}: closed${p.closing ? ` (${p.closing})` : ''}`,
      );
  }
  out.push(...rerunRounds(prev, rows, rounds));
  for (const r of next.replies.slice(prev.replies.length)) out.push(`  dashboard: ${r}`);
  const gpu = next.dashboard ? gpuHoursLine(next.dashboard.body) : null;
  const newRound = out.some((l) => /^(round \d+|baseline)$/.test(l));
  if (gpu && (newRound || (next.dashboard && !prev.dashboard))) out.push(`  ${gpu}`);
  const conclusion = (v: HubView) =>
    v.dashboard
      ? (concludedLine(v.dashboard.body)?.replace(/ The final report is below\.$/, '') ?? null)
      : null;
  const concluded = conclusion(next);
  if (concluded && concluded !== conclusion(prev)) {
    out.push(`concluded: ${concluded}`);
    if (gpu) out.push(`  ${gpu}`);
  } else if (concluded && gpu && gpu !== (prev.dashboard ? gpuHoursLine(prev.dashboard.body) : null)) {
    // the runs stopped at the conclusion are charged on a later pass: the last figure is the dashboard's
    out.push(`  ${gpu}`);
  }
  if (next.reported && !prev.reported)
    out.push('  the final report is posted on the dashboard, which closes');
  return out;
}
