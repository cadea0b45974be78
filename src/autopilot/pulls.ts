// The autopilot's pull requests, pure: the text it opens them with (the reasoning and a hidden
// marker with the round), the marker read back, the text it closes decided ones with, and the
// experiment's runs as the live pass sees them (PilotRun) from its candidates and its bot pull
// requests. The round lives in the marker and in the candidate's hypothesis (./runs.ts).
import type { RunOutcome } from '../campaign/rounds.js';
import { inlineText } from '../github/user-text.js';
import { type PilotAction, type PilotRun, WINNER_LABEL } from './core.js';

/** A bot pull request as the GitHub adapter reads it. */
export interface BotPull {
  pr: number;
  candidate: string;
  round: number;
  state: 'open' | 'closed' | 'merged';
  headSha: string;
  /** Someone else pushed to its branch: the person's now, the autopilot leaves it alone. */
  takenOver: boolean;
  /** Its labels (the winner's label among them once the conclusion put it there). */
  labels?: string[];
  /** A writer whose review approved its current head (read under `submit: approval` only). */
  approvedBy?: string;
}

const MARKER =
  /<!-- topo:autopilot experiment=([a-z0-9][a-z0-9_.-]*) candidate=([a-z0-9][a-z0-9_.-]*) round=(\d{1,3}) -->/;

export function botMarker(experimentId: string, candidate: string, round: number): string {
  return `<!-- topo:autopilot experiment=${experimentId} candidate=${candidate} round=${round} -->`;
}

/** The marker of a bot pull request's body, or null (a person's pull request, or another experiment). */
export function readBotMarker(
  body: string | null | undefined,
  experimentId: string,
): { candidate: string; round: number } | null {
  const m = MARKER.exec(body ?? '');
  if (!m || m[1] !== experimentId) return null;
  return { candidate: m[2] as string, round: Number(m[3]) };
}

export function botPullTitle(experimentId: string, candidate: string, round: number): string {
  return `autopilot round ${round}: ${experimentId}/${candidate}`;
}

/** The body: round, the reasoning `topo suggest` gives (bottleneck, expected effect, predicted memory). */
export function botPullBody(
  experimentId: string,
  candidate: string,
  round: number,
  reasoning: string,
): string {
  return [
    botMarker(experimentId, candidate, round),
    `**Autopilot, round ${round}** of experiment \`${experimentId}\` (policy: \`autopilot\` in its experiment.yaml on the default branch).`,
    '',
    reasoning.replace(/Comment `\/topo submit` to run it\.\s*$/, '').trimEnd(),
    '',
    'This pull request changes only its candidate file. The autopilot requests its run (`submit: auto`) or waits for a writer’s `/topo submit` (`submit: approval`). Push to this branch and it is yours: the autopilot leaves it alone. Close it and the candidate is withdrawn, never proposed again in this experiment.',
  ].join('\n');
}

/** The comment a decided loser or a superseded winner is closed with. */
export function closingText(a: Extract<PilotAction, { kind: 'close' }>, evidence: string | null): string {
  const why =
    a.why === 'superseded'
      ? `superseded: a later round's \`${a.by ?? 'winner'}\` beats it`
      : a.why === 'failed'
        ? 'closed: its run failed'
        : a.why === 'concluded'
          ? 'closed: the experiment concluded before its decision'
          : 'rejected by its decision';
  return [
    `Closed by the autopilot: \`${a.name}\` is ${why}.`,
    ...(evidence ? ['', `Decision: ${inlineText(evidence, 600)}`] : []),
    '',
    'The record keeps it, with its evidence, as a closed candidate.',
  ].join('\n');
}

/** What the pass knows of one candidate with a Request. */
export interface LiveCandidate {
  name: string;
  pr: number;
  /** Its Request stands (queued or running). */
  live: boolean;
  outcome: RunOutcome | null;
  seconds?: number;
  gpuHours: number;
  /** A bot run a pause stopped (`stopped`): it keeps its proposal and waits for a Request again. */
  stopped?: boolean;
  runName?: string;
  /** Why its decision was not reached, and its last relative change (./runs.ts heldFacts). */
  held?: string;
  change?: number;
  /** A guard held it below −min_improvement: to be rerun, and a rerun held so settles (heldFacts). */
  rerun?: boolean;
  settlesOnRerun?: boolean;
  /** Live, and the campaign abandons its job now (src/campaign/held.ts abandonReason): why. */
  abandon?: string;
}

/**
 * The live runs: each candidate with a Request (a bot's when its pull request is one), then each
 * bot pull request without one (opened, waiting for its Request; or closed by a person), then each
 * candidate the bot committed whose pull request a dead pass never opened (`unopened`: its round
 * waits for it). A closed one the record holds is the record's (a decided loser the autopilot
 * closed). The bot's own baseline (round 0), ended with a value, is the reference: `equivalent`.
 */
export function liveRuns(
  candidates: readonly LiveCandidate[],
  pulls: readonly BotPull[],
  recorded: ReadonlySet<string> = new Set(),
  unopened: ReadonlyArray<{ candidate: string; round: number }> = [],
): PilotRun[] {
  const botOf = (name: string, pr: number) => pulls.find((b) => b.pr === pr && b.candidate === name);
  const runs: PilotRun[] = candidates.map((c) => candidateRun(c, botOf(c.name, c.pr)));
  for (const b of pulls)
    if (!runs.some((r) => r.name === b.candidate) && !(b.state !== 'open' && recorded.has(b.candidate)))
      runs.push({
        name: b.candidate,
        round: b.round,
        origin: 'bot',
        pr: b.pr,
        pull: b.state,
        ...pullFacts(b),
        request: 'none',
        outcome: null,
        gpuHours: 0,
      });
  for (const u of unopened)
    if (!runs.some((r) => r.name === u.candidate))
      runs.push({
        name: u.candidate,
        round: u.round,
        origin: 'bot',
        pull: 'none',
        request: 'none',
        outcome: null,
        gpuHours: 0,
      });
  return runs;
}

function pullFacts(b: BotPull): Pick<PilotRun, 'takenOver' | 'approved' | 'labelled'> {
  return {
    ...(b.takenOver ? { takenOver: true } : {}),
    ...(b.approvedBy ? { approved: true } : {}),
    ...(b.labels?.includes(WINNER_LABEL) ? { labelled: true } : {}),
  };
}

function candidateRun(c: LiveCandidate, bot: BotPull | undefined): PilotRun {
  const waiting = c.live || (c.stopped && bot);
  const outcome = waiting ? null : c.outcome;
  // the bot's baseline has no reference to be decided against: measured, it is the reference
  const reference = bot?.round === 0 && outcome === 'undecided' && c.seconds !== undefined;
  return {
    name: c.name,
    round: bot ? bot.round : null,
    origin: bot ? 'bot' : 'person',
    pr: c.pr,
    pull: bot ? bot.state : 'open',
    ...(bot ? pullFacts(bot) : {}),
    request: c.live ? 'live' : c.stopped && bot ? 'none' : 'ended',
    outcome: reference ? 'equivalent' : outcome,
    ...(c.seconds !== undefined ? { seconds: c.seconds } : {}),
    gpuHours: c.gpuHours,
    ...(c.runName ? { runName: c.runName } : {}),
    ...(c.live && bot && c.abandon ? { abandon: c.abandon } : {}),
    ...(outcome !== null && !reference && c.held ? { held: c.held } : {}),
    ...(outcome !== null && !reference && c.change !== undefined ? { change: c.change } : {}),
    ...(outcome !== null && !reference && c.rerun ? { rerun: true } : {}),
    ...(outcome !== null && !reference && c.settlesOnRerun ? { settlesOnRerun: true } : {}),
  };
}
