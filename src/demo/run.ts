// `topo demo`: the whole experiment loop on one machine. Brings up (or reuses) the local cluster,
// creates an experiment from a sample AlpaSim run command, runs the baseline, then rounds of
// suggested candidates on the twin; judges each with the monitor's detector, records each outcome,
// and ends with the final report. Orchestration only: every step is one of the project's parts,
// reached through `DemoParts` (wired in src/demo/parts.ts) so the loop itself is testable.
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import type { BetweenRun } from '../analysis/decision.js';
import { runFigure } from '../analysis/figure.js';
import { type Round, roundWinner, startCampaign } from '../campaign/rounds.js';
import type { LabelState } from '../github/labels.js';
import type { MonitorCheck } from '../monitor/ports.js';
import { standingTitle } from '../report/check-conclusion.js';
import type { ReferenceJobLine } from '../report/pr-comment.js';
import type { Standing } from '../report/standing.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { CandidateObservation, Interval } from '../types/generated/metrics.js';
import { type Cleanup, signalExitCode } from './cleanup.js';
import { type HtmlSection, renderIndexHtml } from './index-html.js';
import type { CandidateRow, LiveView } from './live-view.js';
import type { DemoOutput } from './output.js';

/** `scripts/local-cluster env --json`. */
export interface ClusterEnv {
  stateDir: string;
  clustersFile: string;
  fileSdDir: string;
  prometheusUrl: string;
  timeScale: number;
  runDir: string;
  [key: string]: unknown;
}

export interface DemoCluster {
  /** The cluster's environment when it is up, null when it is down. */
  status(): Promise<ClusterEnv | null>;
  /** True when any part of the cluster runs (someone else's half-started or restarting cluster). */
  anyRunning(): Promise<boolean>;
  /** Brings it up (installing missing Debian packages); needs root. */
  up(log: (line: string) => void): Promise<ClusterEnv>;
  down(log: (line: string) => void): Promise<void>;
}

/** The experiment `topo init` made from the sample command. */
export interface PreparedExperiment {
  experiment: Experiment;
  baseline: Candidate;
}

/** A candidate whose job was submitted. */
export interface SubmittedRun {
  candidate: Candidate;
  runName: string;
  jobId: string;
  /** `reference`: the round's reference job, a run of the current best beside its candidates. */
  role?: 'reference';
}

/** One look at a running candidate: what the live view shows and what the monitor would post. */
export interface Observed {
  state: string;
  simulatedMinutes: number | null;
  secondsPerRollout: number | null;
  /** The detector's observation once it has one. */
  observation: CandidateObservation | null;
  /** The sticky comment exactly as the monitor renders it. */
  comment: string;
  /**
   * Where it stands against the reference: the monitor's one model (src/report/standing.ts), the
   * one its comment's headline, check run and the demo's decision read. Null before it is judged.
   */
  standing: Standing | null;
  /** The check run and the state label the monitor last wrote for its pull request. */
  check: MonitorCheck | null;
  label: LabelState | null;
  /** True when the verdict is final (stable, cyclic, unhealthy) or the run failed or ended. */
  done: boolean;
  /** The reference job beside it as its comment shows it (run, state, GPU-minutes, why it is stopped). */
  referenceJob?: ReferenceJobLine | null;
}

/**
 * The round's reference job (issue 38 item 1): a run of the current best beside the round's
 * candidates, which they are decided against at equal run age; the monitor stops it once no open
 * decision needs it. What the record keeps of it and the terminal prints.
 */
export interface DemoReference {
  round: number;
  run: SubmittedRun;
  /** Run-minutes it ran, and the GPU-minutes its allocation held (the monitor's figures). */
  runMinutes: number | null;
  gpuMinutes: number | null;
  /** `decided`: the monitor stopped it once no open decision needed it; `closed`: its round ended first. */
  ended: 'decided' | 'closed';
  /** Why the monitor stopped it, when it did. */
  stopped: string | null;
  /** The candidates decided against it. */
  candidates: string[];
  observation: CandidateObservation | null;
}

/**
 * What a new candidate is decided against: the record's baseline and current best, with their
 * values (src/record/model.ts referenceOf), read from the record exactly as the monitor action reads
 * it on the default branch, so the demo has no "best" of its own.
 */
export interface Reference {
  /** `value`: what decisions read of it; `figure`: what every surface shows it at. */
  baseline: { name: string; value: Interval; figure?: Interval } | null;
  best: { name: string; value: Interval; figure?: Interval } | null;
  /** The record's current_best.topology (also when it has no interval to decide against). */
  current: string | null;
  /** The between-run term of a recorded reference, from the record's repeated runs (null: assumed). */
  betweenRun?: BetweenRun | null;
}

/** A candidate's end: what goes into the record. */
export interface DemoOutcome {
  candidate: Candidate;
  run: SubmittedRun;
  observation: CandidateObservation | null;
  /** accepted = new best; rejected = measured, not better; failed = crashed/OOM; stopped = no verdict in time. */
  decision: 'accepted' | 'rejected' | 'failed' | 'stopped';
  reason: string;
}

export interface DemoSuggestion {
  proposals: Candidate[];
  /** Each proposal's candidate file as the suggester writes it, by name (else the demo writes YAML). */
  files?: Record<string, string>;
  /** Why the suggester advises to stop, when it does. */
  stop?: string;
}

export interface DemoParts<R> {
  cluster: DemoCluster;
  prepare(command: string, env: ClusterEnv, dateStamp: string): Promise<PreparedExperiment>;
  /** Submits a candidate; `reference`: as the round's reference job, under a run name of its own. */
  submit(
    experiment: Experiment,
    candidate: Candidate,
    env: ClusterEnv,
    role?: 'reference',
  ): Promise<SubmittedRun>;
  cancel(run: SubmittedRun, env: ClusterEnv): Promise<void>;
  /**
   * One look at every run of a batch (the monitor's pass, src/monitor): one Observed per run, in order.
   * `reference`: the record's baseline and current best, for the decision the monitor writes.
   */
  observe(
    prepared: PreparedExperiment,
    runs: readonly SubmittedRun[],
    env: ClusterEnv,
    reference: Reference,
  ): Promise<Observed[]>;
  /** The last lines of a run's Slurm job output (empty when it cannot be read). */
  jobLog(run: SubmittedRun, env: ClusterEnv): Promise<string[]>;
  createRecord(prepared: PreparedExperiment): R;
  apply(record: R, outcome: DemoOutcome): R;
  /** The record with the round's reference job among its reference runs (src/record/reference-runs.ts). */
  applyReference(record: R, reference: DemoReference): R;
  /** The record's baseline and current best as the monitor reads them (the one best). */
  references(record: R): Reference;
  recordJson(record: R): string;
  recordMarkdown(record: R): string;
  suggest(record: R, prepared: PreparedExperiment, count: number): Promise<DemoSuggestion>;
  finalReport(record: R, prepared: PreparedExperiment): string;
}

export interface DemoOptions {
  command: string;
  /** Suggest rounds after the baseline (quick: 1, full: 2). */
  rounds: number;
  /** Candidates per round (the seed's limit: 3). */
  perRound: number;
  /** Give up on a candidate without a final verdict after this many simulated minutes. */
  maxSimulatedMinutes: number;
  /** Real seconds between two looks. */
  pollSeconds: number;
  /** yyyymmdd of the experiment id. */
  dateStamp: string;
  isRoot: boolean;
  /** Path of mermaid.min.js to copy beside index.html. */
  mermaidScript: string;
}

export interface DemoResult {
  exitCode: number;
  experimentId: string | null;
  outcomes: DemoOutcome[];
  /** Each round's reference job (a run of the current best beside its candidates). */
  references: DemoReference[];
  files: string[];
  wallSeconds: number;
}

/** The exact command a non-root user runs before the demo. */
export const INSTALL_COMMAND =
  'sudo apt-get update && sudo apt-get install -y slurm-wlm munge prometheus openssh-server';

/** The browser the demo page's check opens index.html in (test/integration/demo/demo.test.ts). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * What the demo says when Chromium is missing, else null: index.html opens in any browser, but its
 * check renders it in headless Chromium, which `npm ci` does not install (it is a Debian package).
 */
export function chromiumNote(exists: (path: string) => boolean): string | null {
  if (exists(CHROMIUM_PATH)) return null;
  return `Chromium is not installed (${CHROMIUM_PATH}): index.html opens in any browser, but the page's check (npm run test:all: test/integration/demo/demo.test.ts) renders it in headless Chromium, and npm ci does not install it. Install it:\n  sudo apt-get update && sudo apt-get install -y chromium`;
}

export class DemoAborted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/**
 * The exit code of a demo an interruption ended, once said; anything else is thrown on. A Ctrl-C also
 * reaches the Slurm commands running at that moment, so whatever failed after an interruption counts
 * as the interruption.
 */
export function interruptedExit(error: unknown, signal: AbortSignal, log: (line: string) => void): number {
  if (!(error instanceof DemoAborted) && !signal.aborted) throw error;
  const by = error instanceof DemoAborted ? error.signal : ((signal.reason as NodeJS.Signals) ?? 'SIGINT');
  log(`demo interrupted by ${by}: stopping what it started`);
  return signalExitCode(by);
}

/**
 * The seconds per rollout the terminal shows for a candidate: its judgement's figure
 * (src/analysis/figure.ts runFigure: a decided run's is its decision's), as its comment, check,
 * record and chart show it; before it has one, its current full-run reading.
 */
export function judgedValue(observation: CandidateObservation | null): number | null {
  const figure = runFigure({
    decision: observation?.decision ?? null,
    verdict: observation?.verdict ?? null,
    reading: observation?.stable_metrics?.seconds_per_rollout_full_run ?? null,
  });
  return figure?.value ?? observation?.verdict?.current_full_run ?? null;
}

/**
 * The decision the demo records for a finished candidate (the person's merge or close in a real
 * experiment), read from the monitor's standing: the one its comment, check run and label show,
 * worded as the check's title. The reference (the baseline) and a candidate decided better are
 * accepted; worse, not-better and equivalent are rejected; a failed run failed; one that ended
 * without a decision (or before it was judged) is stopped. No rule of its own (issue 25).
 */
export function decide(
  standing: Standing | null,
  observation: CandidateObservation | null,
): { decision: DemoOutcome['decision']; reason: string } {
  if (!standing) return { decision: 'stopped', reason: 'not judged within the demo time budget' };
  const reason = standingTitle(standing);
  switch (standing.outcome) {
    case 'reference': {
      const value = judgedValue(observation);
      return {
        decision: 'accepted',
        reason: value === null ? reason : `${reason}: ${value.toFixed(2)} s/rollout`,
      };
    }
    case 'better':
      return { decision: 'accepted', reason };
    case 'worse':
    case 'not-better':
    case 'equivalent':
      return { decision: 'rejected', reason };
    case 'failed':
      return { decision: 'failed', reason };
    default:
      return { decision: 'stopped', reason };
  }
}

/**
 * Of the candidates of one round that beat the current best, only the campaign's round winner is
 * merged (src/campaign/rounds.ts roundWinner, the rule the bench and the autopilot use: a person
 * merges one pull request per round); the others are closed with the reason.
 */
export function oneWinner(batch: readonly DemoOutcome[]): DemoOutcome[] {
  const accepted = batch.filter((o) => o.decision === 'accepted');
  if (accepted.length < 2) return [...batch];
  // decided against the same reference, not against each other: the decided change orders them
  // (campaign's roundWinner), as their figures do in the record's rule (src/record/figure.ts)
  const change = (o: DemoOutcome) =>
    o.observation?.decision?.relative_change?.value ?? Number.POSITIVE_INFINITY;
  const round: Round = {
    index: 0,
    parent: 'reference',
    runs: accepted.map((o) => ({
      name: o.candidate.name,
      outcome: 'better' as const,
      seconds: 1 + change(o),
      gpuHours: 0,
    })),
  };
  const reference = startCampaign({ name: 'reference', seconds: Number.POSITIVE_INFINITY, gpuHours: 0 });
  const name = roundWinner(reference, round)?.name;
  const winner = accepted.find((o) => o.candidate.name === name) ?? accepted[0]!;
  const by = `${(Math.abs(change(winner)) * 100).toFixed(1)}%`;
  return batch.map((o) =>
    o.decision === 'accepted' && o !== winner
      ? {
          ...o,
          decision: 'rejected' as const,
          reason: `${o.reason}, but ${winner.candidate.name} of the same round is faster (decided ${by} faster than the same reference)`,
        }
      : o,
  );
}

/** The live view's verdict column: the monitor's standing once decided, else the detector's verdict. */
function verdictText(o: Observed, outcome?: DemoOutcome): string | null {
  const s = o.standing;
  if (outcome || (s && s.outcome !== 'measuring')) {
    const value = judgedValue(o.observation);
    return `${s?.outcome ?? outcome?.decision}${value === null ? '' : ` (${value.toFixed(2)} s)`}`;
  }
  const v = o.observation?.verdict;
  if (!v || v.state === 'no-data') return null;
  return v.state;
}

interface BatchContext<R> {
  parts: DemoParts<R>;
  prepared: PreparedExperiment;
  env: ClusterEnv;
  options: DemoOptions;
  view: LiveView;
  output: DemoOutput;
  cleanup: Cleanup;
  signal: AbortSignal;
  reference: () => Reference;
}

/** A run of a batch: its job, its latest look, and (a candidate) its outcome once it has one. */
interface BatchRun {
  run: SubmittedRun;
  unregister: () => void;
  last: Observed | null;
  outcome?: DemoOutcome;
  /** The demo cancelled it at its time budget: the next look is its last. */
  cancelled?: boolean;
}

/** A batch's runs: the round's reference job first (first in the queue), then its candidates. */
async function submitBatch<R>(
  candidates: Candidate[],
  ctx: BatchContext<R>,
  best: Candidate | null,
): Promise<{ runs: BatchRun[]; ref: BatchRun | null }> {
  const { parts, prepared, env, cleanup, view } = ctx;
  const start = async (candidate: Candidate, role?: 'reference'): Promise<BatchRun> => {
    const run = await parts.submit(prepared.experiment, candidate, env, role);
    const unregister = cleanup.add(`cancel ${run.runName} (job ${run.jobId})`, () => parts.cancel(run, env));
    const what = role
      ? `the round's reference job, a run of the current best ${candidate.name}`
      : candidate.name;
    view.log(`submitted ${what}: Slurm job ${run.jobId}, run ${run.runName}`);
    return { run, unregister, last: null };
  };
  const ref = best ? await start(best, 'reference') : null;
  const runs: BatchRun[] = [];
  for (const candidate of candidates) runs.push(await start(candidate));
  return { runs, ref };
}

/** The live view's rows: the reference job (when there is one), then each candidate. */
function rowsOf(runs: readonly BatchRun[], ref: BatchRun | null): CandidateRow[] {
  const row = (r: BatchRun): CandidateRow => ({
    name: r === ref ? `${r.run.candidate.name} (reference)` : r.run.candidate.name,
    state: r.outcome ? (r.last?.state ?? r.outcome.decision) : (r.last?.state ?? 'submitted'),
    simulatedMinutes: r.last?.simulatedMinutes ?? null,
    secondsPerRollout: r.last?.secondsPerRollout ?? null,
    verdict: r === ref ? (r.last ? 'reference' : null) : r.last ? verdictText(r.last, r.outcome) : null,
  });
  return [...(ref ? [ref] : []), ...runs].map(row);
}

/** A candidate's look: its outcome once done (comment and check kept), or cancelled at its time budget. */
async function takeLook<R>(r: BatchRun, look: Observed, ctx: BatchContext<R>): Promise<void> {
  const { parts, env, output, options } = ctx;
  r.last = look;
  const overTime = (look.simulatedMinutes ?? 0) >= options.maxSimulatedMinutes;
  if (look.done || r.cancelled) {
    const { decision, reason } = decide(look.standing, look.observation);
    r.outcome = { candidate: r.run.candidate, run: r.run, observation: look.observation, decision, reason };
    const name = r.run.candidate.name;
    output.write(`comments/${name}.md`, look.comment);
    output.write(`checks/${name}.json`, `${JSON.stringify(checkFile(look), null, 2)}\n`);
    await parts.cancel(r.run, env); // idempotent: the monitor has stopped it or it ended
    r.unregister();
  } else if (overTime) {
    // Its time budget is spent: cancel it, and let one more look write what the monitor says then.
    await parts.cancel(r.run, env);
    r.cancelled = true;
  }
}

/** Sleeps between looks; an interruption ends the demo. */
async function pause(seconds: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(seconds * 1000, undefined, { signal });
  } catch {
    throw new DemoAborted((signal.reason as NodeJS.Signals) ?? 'SIGINT');
  }
}

/** What the candidates' comments last showed of the reference job (the monitor's one line). */
function lastReferenceLine(
  runs: readonly BatchRun[],
  seen: ReferenceJobLine['run'],
): ReferenceJobLine['run'] {
  const lines = runs.map((r) => r.last?.referenceJob?.run ?? null).filter((l) => l !== null);
  const line = lines.find((l) => l.stopping) ?? lines[0] ?? null;
  if (!line) return seen;
  // the reason the monitor stopped it is said once, in the pass that stops it: keep it
  return { ...line, stopping: line.stopping ?? seen?.stopping ?? null };
}

/**
 * Runs one batch of candidates to their verdicts, beside the round's reference job when `best` is
 * given (the monitor decides them against it and stops it once no open decision needs it); returns
 * one outcome per candidate, in order, and the reference job's account.
 */
async function runBatch<R>(
  title: string,
  candidates: Candidate[],
  ctx: BatchContext<R>,
  best: { candidate: Candidate; round: number } | null = null,
): Promise<{ outcomes: DemoOutcome[]; reference: DemoReference | null }> {
  const { parts, prepared, env, view, signal } = ctx;
  const { runs, ref } = await submitBatch(candidates, ctx, best?.candidate ?? null);
  let line: ReferenceJobLine['run'] = null;
  view.update(title, rowsOf(runs, ref));
  while (runs.some((r) => !r.outcome)) {
    if (signal.aborted) throw new DemoAborted((signal.reason as NodeJS.Signals) ?? 'SIGINT');
    // the reference job stays in every look: the candidates still open read its data, also once it ended
    const live = [...(ref ? [ref] : []), ...runs.filter((x) => !x.outcome)];
    const observed = await parts.observe(
      prepared,
      live.map((r) => r.run),
      env,
      ctx.reference(),
    );
    for (const [i, r] of live.entries()) {
      const look = observed[i];
      if (!look) continue;
      if (r === ref) r.last = look;
      else await takeLook(r, look, ctx);
    }
    line = lastReferenceLine(live, line);
    view.update(title, rowsOf(runs, ref));
    if (runs.some((r) => !r.outcome)) await pause(ctx.options.pollSeconds, signal);
  }
  view.freeze();
  const outcomes = runs.map((r) => r.outcome!);
  if (!ref || !best) return { outcomes, reference: null };
  await parts.cancel(ref.run, env); // idempotent: the monitor stopped it once no decision needed it
  ref.unregister();
  if (ref.last?.comment) ctx.output.write(`comments/reference-round-${best.round}.md`, ref.last.comment);
  return { outcomes, reference: referenceAccount(ref, best.round, line, outcomes) };
}

/** The round's reference job as the record keeps it and the terminal prints it. */
function referenceAccount(
  ref: BatchRun,
  round: number,
  line: ReferenceJobLine['run'],
  outcomes: readonly DemoOutcome[],
): DemoReference {
  return {
    round,
    run: ref.run,
    runMinutes: ref.last?.simulatedMinutes ?? null,
    gpuMinutes: line?.gpuMinutes ?? null,
    ended: line?.stopping ? 'decided' : 'closed',
    stopped: line?.stopping ?? null,
    candidates: outcomes.map((o) => o.candidate.name),
    observation: ref.last?.observation ?? null,
  };
}

/** The terminal's line on a round's reference job: its run, run-minutes, cost and why it stopped. */
export function referenceLine(r: DemoReference): string {
  const minutes = r.runMinutes === null ? '' : `${Math.round(r.runMinutes)} run-minutes, `;
  const cost = r.gpuMinutes === null ? 'GPU-minutes unknown' : `${Math.round(r.gpuMinutes)} GPU-minutes`;
  const end = r.stopped ? `stopped by the monitor: ${r.stopped}` : 'cancelled when its round ended';
  return `round ${r.round}: reference job ${r.run.runName} (the current best ${r.run.candidate.name} beside ${r.candidates.join(', ')}): ${minutes}${cost}; ${end}`;
}

/** GPU-minutes of a round: its candidates' (each decision's figure) and its reference job's. */
export function roundCost(outcomes: readonly DemoOutcome[], reference: DemoReference | null): string {
  const used = outcomes.map((o) => o.observation?.decision?.gpu_minutes_used ?? null);
  const candidates = used.reduce<number>((a, v) => a + (v ?? 0), 0);
  const ref = reference?.gpuMinutes ?? 0;
  const minutes = outcomes
    .map(
      (o) =>
        `${o.candidate.name} ${o.observation?.verdict?.minutes_of_data == null ? '?' : Math.round(o.observation.verdict.minutes_of_data)}`,
    )
    .join(', ');
  return `${Math.round(candidates + ref)} GPU-minutes (candidates ${Math.round(candidates)}${reference ? `, reference job ${Math.round(ref)}` : ''}); run-minutes: ${minutes}`;
}

/** What the demo keeps of a candidate's pull request besides its comment: the check run and the label. */
function checkFile(look: Observed) {
  return {
    title: look.check?.title ?? null,
    conclusion: look.check?.conclusion ?? null,
    summary: look.check?.summary ?? null,
    label: look.label,
    standing: look.standing?.outcome ?? null,
  };
}

function candidateFile(experimentId: string, name: string): string {
  return `topologies/${experimentId}/${name}.yaml`;
}

/** Lines of a job's log that name a cause, most telling first (else its last line). */
export function causeLine(lines: readonly string[]): string | null {
  const text = lines.map((l) => l.trim()).filter((l) => l !== '');
  const cause = /error|fail|fatal|cannot|can't|no such|not found|denied|refused|traceback|exception|killed/i;
  return text.findLast((l) => cause.test(l)) ?? text.at(-1) ?? null;
}

/**
 * The cause when the baseline failed for a reason other than GPU memory (which the suggester sizes
 * around): its failure and the job's log line that names it. Null when the baseline did not fail so.
 */
async function brokenBaseline<R>(
  outcome: DemoOutcome | undefined,
  parts: DemoParts<R>,
  env: ClusterEnv,
): Promise<string | null> {
  if (outcome?.decision !== 'failed') return null;
  const failure = outcome.observation?.failure;
  if (failure?.kind === 'gpu-oom') return null;
  const line = causeLine(await parts.jobLog(outcome.run, env).catch(() => []));
  const what = failure ? `${failure.kind}: ${failure.message}` : outcome.reason;
  return `${outcome.candidate.name} failed (${what}); the log of Slurm job ${outcome.run.jobId} says: ${line ?? '(nothing: the job wrote no output)'}`;
}

/** The terminal's line on the record's current best (the one the record, report and site name). */
export function bestLine(reference: Reference, baselineName: string): string {
  const name = reference.current;
  if (!name) return 'current best: none yet (no accepted run with a value)';
  const best = reference.best?.name === name ? reference.best : null;
  const value = best ? (best.figure ?? best.value).value : null;
  const at = value === null ? '' : ` (${value.toFixed(2)} s/rollout)`;
  return name === baselineName
    ? `current best: ${name}${at}; no candidate beat the baseline so far`
    : `current best: ${name}${at}`;
}

/** The record's current best as a candidate the demo ran (the baseline, or a round's winner). */
function bestCandidate(
  name: string | null,
  baseline: Candidate,
  outcomes: readonly DemoOutcome[],
): Candidate | null {
  if (!name) return null;
  return name === baseline.name
    ? baseline
    : (outcomes.find((o) => o.candidate.name === name)?.candidate ?? null);
}

/**
 * The local cluster: reused when up (and left up), else brought up (root only) and taken down at
 * the end. Null when it is down and this user cannot bring it up: what to run is logged.
 */
export async function ensureCluster(
  cluster: DemoCluster,
  isRoot: boolean,
  cleanup: Cleanup,
  log: (line: string) => void,
): Promise<ClusterEnv | null> {
  const up = await cluster.status();
  if (up) {
    log(
      `local cluster is up (Prometheus ${up.prometheusUrl}, time scale ${up.timeScale}); leaving it up afterwards`,
    );
    return up;
  }
  if (!isRoot) {
    log('The local Slurm cluster is not up, and bringing it up needs root.');
    log(`Install the system packages:\n  ${INSTALL_COMMAND}`);
    log('then start the cluster and re-run the demo:\n  sudo bash scripts/local-cluster up && npm run demo');
    return null;
  }
  // Only a cluster that was fully down is the demo's to stop: a partly running one (being
  // restarted by someone else) is completed by `up` but left running afterwards.
  const owned = !(await cluster.anyRunning());
  log('bringing up the local cluster (Slurm, Prometheus, sshd): scripts/local-cluster up');
  if (owned) cleanup.add('stop the local cluster (scripts/local-cluster down)', () => cluster.down(log));
  const env = await cluster.up(log);
  log(
    `local cluster is up (Prometheus ${env.prometheusUrl}, time scale ${env.timeScale})` +
      (owned ? '' : '; parts of it were already running, so it stays up afterwards'),
  );
  return env;
}

/** What a demo has produced so far: its result reads it however the demo ends. */
interface Produced {
  experimentId: string | null;
  outcomes: DemoOutcome[];
  references: DemoReference[];
}

/** A demo under way: its parts and experiment, the record as it grows, and what it has produced. */
interface DemoLoop<R> extends BatchContext<R> {
  baseline: Candidate;
  experimentId: string;
  record: R;
  produced: Produced;
  log: (line: string) => void;
}

/** The whole demo. Never throws for an interruption: returns its exit code after cleaning up. */
export async function runDemo<R>(
  options: DemoOptions,
  deps: {
    parts: DemoParts<R>;
    view: LiveView;
    output: DemoOutput;
    cleanup: Cleanup;
    signal: AbortSignal;
    now?: () => number;
  },
): Promise<DemoResult> {
  const { parts, view, output, cleanup, signal } = deps;
  const now = deps.now ?? Date.now;
  const started = now();
  const log = (line: string) => view.log(line);
  const produced: Produced = { experimentId: null, outcomes: [], references: [] };
  const result = (exitCode: number): DemoResult => ({
    exitCode,
    ...produced,
    files: output.written(),
    wallSeconds: (now() - started) / 1000,
  });

  try {
    // 1. The local cluster: reuse it when up (and leave it up), else bring it up and take it down at the end.
    const env = await ensureCluster(parts.cluster, options.isRoot, cleanup, log);
    if (!env) return result(1);
    if (signal.aborted) throw new DemoAborted(signal.reason as NodeJS.Signals);
    const loop = await prepareLoop(options, { ...deps, env, produced, log });
    return result(await runLoop(loop));
  } catch (error) {
    return result(interruptedExit(error, signal, log));
  } finally {
    await cleanup.runAll(log);
  }
}

/** 2. The experiment, from the sample full run command (what `topo init` does), and its empty record. */
async function prepareLoop<R>(
  options: DemoOptions,
  deps: Omit<DemoLoop<R>, 'options' | 'prepared' | 'reference' | 'baseline' | 'experimentId' | 'record'>,
): Promise<DemoLoop<R>> {
  const { parts, output, log } = deps;
  log(`creating the experiment from:\n  ${options.command}`);
  const prepared = await parts.prepare(options.command, deps.env, options.dateStamp);
  const { experiment, baseline } = prepared;
  const experimentId = experiment.experiment_id;
  deps.produced.experimentId = experimentId;
  output.write(`topologies/${experimentId}/experiment.yaml`, stringify(experiment));
  output.write(candidateFile(experimentId, baseline.name), stringify(baseline));
  const loop: DemoLoop<R> = {
    ...deps,
    options,
    prepared,
    baseline,
    experimentId,
    record: parts.createRecord(prepared),
    reference: () => parts.references(loop.record),
  };
  return loop;
}

/** 3. The baseline, then the rounds of suggestions; 4. the final report and the page. The exit code. */
async function runLoop<R>(loop: DemoLoop<R>): Promise<number> {
  const { parts, options, log } = loop;
  settle(loop, 'baseline', await runBatch('baseline', [loop.baseline], loop));
  const broken = await brokenBaseline(loop.produced.outcomes[0], parts, loop.env);
  if (broken) {
    log(`the demo measured nothing: ${broken}`);
    log('no suggestion can come from a baseline that did not run; fix that cause and run the demo again');
    return 1;
  }
  for (let round = 1; round <= options.rounds; round++) if (!(await runRound(loop, round))) break;

  const report = parts.finalReport(loop.record, loop.prepared);
  const reportFile = `experiments/${loop.experimentId}-report.md`;
  loop.output.write(reportFile, report);
  const recordMd = parts.recordMarkdown(loop.record);
  writeIndex(loop.output, options, loop.experimentId, loop.produced.outcomes, recordMd, report, reportFile);
  return 0;
}

/** One round of suggestions run beside the current best; false when the suggester proposed nothing. */
async function runRound<R>(loop: DemoLoop<R>, round: number): Promise<boolean> {
  const { options, log, experimentId } = loop;
  const suggestion = await loop.parts.suggest(loop.record, loop.prepared, options.perRound);
  if (suggestion.proposals.length === 0) {
    log(`round ${round}: no proposals${suggestion.stop ? ` (${suggestion.stop})` : ''}; stopping`);
    return false;
  }
  for (const c of suggestion.proposals) {
    loop.output.write(candidateFile(experimentId, c.name), suggestion.files?.[c.name] ?? stringify(c));
    log(`round ${round}: ${c.name}: ${c.hypothesis ?? ''}`.trimEnd());
  }
  // the round's candidates run beside a job of the current best, decided against it at equal run age
  const best = bestCandidate(loop.reference().current, loop.baseline, loop.produced.outcomes);
  const title = `round ${round} of ${options.rounds}`;
  settle(
    loop,
    `round ${round}`,
    await runBatch(title, suggestion.proposals, loop, best ? { candidate: best, round } : null),
  );
  return true;
}

/** A batch's outcomes (one winner) and reference job into the record, told, and the record written. */
function settle<R>(
  loop: DemoLoop<R>,
  what: string,
  { outcomes: batch, reference: ref }: Awaited<ReturnType<typeof runBatch>>,
): void {
  const { parts, log, produced, experimentId } = loop;
  for (const outcome of oneWinner(batch)) {
    loop.record = parts.apply(loop.record, outcome);
    produced.outcomes.push(outcome);
    log(`${outcome.candidate.name}: ${outcome.decision} — ${outcome.reason}`);
  }
  if (ref) {
    loop.record = parts.applyReference(loop.record, ref);
    produced.references.push(ref);
    log(referenceLine(ref));
  }
  log(`${what}: ${roundCost(batch, ref)}`);
  log(bestLine(loop.reference(), loop.baseline.name));
  loop.output.write(`experiments/${experimentId}.json`, parts.recordJson(loop.record));
  loop.output.write(`experiments/${experimentId}.md`, parts.recordMarkdown(loop.record));
}

function writeIndex(
  output: DemoOutput,
  options: DemoOptions,
  experimentId: string,
  outcomes: DemoOutcome[],
  recordMd: string,
  report: string,
  reportFile: string,
): void {
  output.copy(options.mermaidScript, 'mermaid.min.js');
  const sections: HtmlSection[] = [
    { id: 'final-report', title: 'Final report', markdown: report, file: reportFile },
    {
      id: 'record',
      title: `Experiment record ${experimentId}`,
      markdown: recordMd,
      file: `experiments/${experimentId}.md`,
    },
    ...outcomes.map((o) => ({
      id: `comment-${o.candidate.name}`,
      title: `Pull-request comment: ${o.candidate.name}`,
      markdown: readComment(output, o.candidate.name),
      file: `comments/${o.candidate.name}.md`,
    })),
  ];
  output.write(
    'index.html',
    renderIndexHtml({
      title: `topo demo: ${experimentId}`,
      intro: `Started from: ${options.command}`,
      sections,
      mermaidScript: 'mermaid.min.js',
    }),
  );
}

function readComment(output: DemoOutput, name: string): string {
  return output.read(`comments/${name}.md`);
}
