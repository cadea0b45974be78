// The dashboard (Renovate's Dependency Dashboard, one issue per experiment) and `topo autopilot
// status` print the same text from the same plan: the rounds with their candidates, decisions and
// pull requests; GPU-hours spent, committed and left; the best so far against the baseline; what
// comes next or why it waits. Pure.
import { inlineText } from '../github/user-text.js';
import { type PilotAction, type PilotPlan, type PilotRun, type Stall, WINNER_LABEL } from './core.js';

/** The hidden marker that finds an experiment's dashboard issue among the repository's issues. */
export function dashboardMarker(experimentId: string): string {
  return `<!-- topo:autopilot-dashboard experiment=${experimentId} -->`;
}

export function dashboardTitle(experimentId: string): string {
  return `Autopilot dashboard: ${experimentId}`;
}

const h = (x: number) => (Math.round(x * 10) / 10).toFixed(1);

export function actionText(a: PilotAction): string {
  switch (a.kind) {
    case 'open':
      return a.round === 0
        ? "open the baseline's pull request: the experiment's starting topology, measured first"
        : `open round ${a.round}: ${a.reruns?.length ? `rerun ${a.reruns.map((n) => `\`${n}\``).join(', ')} (held, pointing at a gain) beside the round's reference, and ` : ''}up to ${a.count} proposal(s) of \`topo suggest\` from \`${a.parent}\``;
    case 'submit':
      return `submit \`${a.name}\` (#${a.pr})`;
    case 'close':
      return a.why === 'superseded'
        ? `close \`${a.name}\` (#${a.pr}): superseded by \`${a.by}\``
        : a.why === 'failed'
          ? `close \`${a.name}\` (#${a.pr}): its run failed (recorded as failed)`
          : a.why === 'concluded'
            ? `close \`${a.name}\` (#${a.pr}): the experiment concluded before its decision`
            : `close \`${a.name}\` (#${a.pr}): rejected by its decision`;
    case 'stop':
      return `stop ${a.reference ? 'the reference job of ' : ''}\`${a.name}\` (#${a.pr}): ${inlineText(a.reason, 200)}`;
    case 'conclude':
      return `conclude (${inlineText(a.reason, 200)}); winner: ${a.winner ? `\`${a.winner}\`` : 'none, the baseline stays'}`;
    case 'label':
      return `label the winner \`${a.name}\` (#${a.pr}) \`${WINNER_LABEL}\``;
    case 'merge':
      return `merge ${a.why === 'baseline' ? 'the measured baseline' : 'the winner'} \`${a.name}\` (#${a.pr}) once its required checks pass, and record it`;
    case 'report':
      return 'post the final report here, from the record';
  }
}

function roundRows(runs: readonly PilotRun[]): string[] {
  const rows = [...runs]
    .filter((r) => r.round !== null || r.request !== 'none')
    .sort((a, b) => (a.round ?? 1e9) - (b.round ?? 1e9) || a.name.localeCompare(b.name));
  return rows.map((r) => {
    const round = r.round === 0 ? 'baseline' : r.round === null ? 'a person’s' : String(r.round);
    const decision =
      r.round === 0 && r.outcome !== null && r.outcome !== 'failed'
        ? 'reference'
        : (r.outcome ?? (r.request === 'live' ? 'running' : r.pull === 'closed' ? 'withdrawn' : 'waiting'));
    const seconds = r.seconds !== undefined ? r.seconds.toFixed(2) : '–';
    const attempt = (r.attempt ?? 1) > 1 ? ` (attempt ${r.attempt})` : '';
    return `| ${round} | \`${r.name}\`${attempt} | ${r.pr !== undefined ? `#${r.pr}` : '–'} | ${decision} | ${seconds} | ${h(r.gpuHours)} |`;
  });
}

function bestLine(plan: PilotPlan, runs: readonly PilotRun[]): string {
  const { best, baseline } = plan.campaign;
  const base = runs.find((r) => r.round === 0);
  if (!best && base?.outcome === 'failed')
    return `**Best so far:** none measured (the baseline \`${baseline.name}\` failed).`;
  if (!best)
    return base
      ? `**Best so far:** none yet: the baseline \`${base.name}\` is still measuring.`
      : '**Best so far:** none yet: no baseline is recorded (merge its pull request, or let the autopilot open it).';
  if (best.name === baseline.name || baseline.seconds === null)
    return `**Best so far:** \`${best.name}\`, ${best.seconds.toFixed(2)} s/rollout.`;
  const gain = (1 - best.seconds / baseline.seconds) * 100;
  return `**Best so far:** \`${best.name}\`, ${best.seconds.toFixed(2)} s/rollout against the baseline's ${baseline.seconds.toFixed(2)} (${gain.toFixed(1)}% faster).`;
}

/**
 * What only a person can resolve, each with what they can do; nothing when the bot has it in hand.
 * The text is the bot's own Markdown: whatever it quotes from elsewhere (an error, a reason) was
 * made safe with inlineText where the stall was made.
 */
export function stallLines(stalls: readonly Stall[]): string[] {
  if (stalls.length === 0) return [];
  return [
    '**Needs a person:**',
    ...stalls.map(
      (s) => `- ${s.pr !== undefined ? `#${s.pr}: ` : ''}${s.what}. **What you can do:** ${s.fix}.`,
    ),
    '',
  ];
}

/**
 * The dashboard's text (and `topo autopilot status`'s); `controls`: the registry's dashboard commands,
 * one line each; `stalls`: the pass's own, beside the plan's.
 */
export function renderDashboard(
  experimentId: string,
  runs: readonly PilotRun[],
  plan: PilotPlan,
  controls: readonly string[],
  stalls: readonly Stall[] = [],
): string {
  const b = plan.budget;
  const next = plan.actions.length
    ? plan.actions.map((a) => `- ${actionText(a)}`)
    : [`- nothing: ${plan.waiting ?? 'up to date'}`];
  return [
    dashboardMarker(experimentId),
    `# ${dashboardTitle(experimentId)}`,
    '',
    `**Round:** ${plan.round === 0 ? 'none yet (the baseline)' : plan.round}. ${plan.waiting ? `**Waiting:** ${inlineText(plan.waiting, 300)}` : ''}`.trimEnd(),
    '',
    `**GPU-hours:** ${h(b.spent)} spent, ${h(b.committed)} committed to live runs, ${h(Math.max(0, b.left))} left of ${h(b.limit)}.`,
    '',
    bestLine(plan, runs),
    '',
    ...stallLines([...plan.stalls, ...stalls]),
    '| round | candidate | pull request | decision | s/rollout | GPU-hours |',
    '|---|---|---|---|---|---|',
    ...roundRows(runs),
    '',
    '**Next:**',
    ...next,
    '',
    `Controls (writers only, as a comment here): ${controls.join('; ')}.`,
  ].join('\n');
}
