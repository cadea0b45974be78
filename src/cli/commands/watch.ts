// `topo watch <experiment> [candidate…]`: the monitor's pass from the CLI, for a team without GitHub.
// The same stages, judge and decision path as the action (src/monitor monitorPass) over the
// watched runs, through the local ports (src/monitor/local-ports.ts): each pass decides, stops a
// run at its decision (stop_when_decided) and starts or stops the round's reference job beside
// the candidates; each decision is printed as its pull request comment's headline; a run that
// ended is recorded as the record workflow records a merged or closed pull request
// (src/usecases/record-local.ts). Its memory (each run's comment, the reference Requests) is a
// state file in the checkout, so Ctrl-C leaves the runs as they are and a second watch resumes.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { againstLiveRun } from '../../analysis/figure.js';
import type { RunJob } from '../../judge/job.js';
import { endedWithoutRunning } from '../../judge/state.js';
import type { RunRequest } from '../../lifecycle/model.js';
import { slurmMonitorPort } from '../../monitor/adapters.js';
import { emptyWatchState, type LocalWatchState, localMonitorPorts } from '../../monitor/local-ports.js';
import { monitorPass } from '../../monitor/pass.js';
import type { MonitorPorts } from '../../monitor/ports.js';
import type { CandidateReport, PassReport } from '../../monitor/report.js';
import { changeOf } from '../../record/change.js';
import { recordPaths, referenceSourceOf } from '../../record/model.js';
import { recordedReferences } from '../../record/references.js';
import { parseRecord } from '../../record/validate.js';
import { headlineLine, viewFigure, viewStanding } from '../../report/pr-comment.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import type { SlurmClient } from '../../slurm/types.js';
import { isLive } from '../../slurm/types.js';
import { hash8 } from '../../topology/expand.js';
import { parseRunName } from '../../topology/run-name.js';
import type { Experiment } from '../../types/generated/experiment.js';
import type { DecisionReference } from '../../types/generated/metrics.js';
import type { ExperimentRecord } from '../../types/generated/record.js';
import type { Topology } from '../../types/generated/topology.js';
import { withRunName } from '../../usecases/prepare.js';
import { recordLocally, recordReferenceLocally } from '../../usecases/record-local.js';
import { submitCandidate } from '../../usecases/submit.js';
import { type CandidateDetails, renderCandidateFile } from '../../usecases/validate.js';
import { flag, num, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, FindingError, UsageError } from '../errors.js';
import { ensurePrometheus } from '../services.js';
import { TELEMETRY_OPTIONS, type TelemetryOptions, telemetryOptions, telemetryValues } from './analyze.js';
import { loadExperiment } from './experiments.js';
import { JSON_OPTION, TOPOLOGIES_OPTION } from './options.js';
import { candidateOf, readRecord, writeRecordFiles } from './record.js';
import { figureJson, type StatusRow } from './status.js';
import { validateOptionsFor } from './validate.js';

export const watchCommand: Command = {
  name: 'watch',
  summary: "Decide, stop and record an experiment's runs as the monitor does, without GitHub",
  help: {
    synopsis: 'topo watch <experiment> [candidate…] [options]',
    description:
      "The monitor's pass from the CLI: the same stages, judge and decision path as the monitor action, with no GitHub. It watches each named candidate's newest run of the topology its file describes (default: every candidate with a live run, or an ended one the record does not hold yet; a job that never ran, as one an interrupted `topo submit` cancelled, is no run) and looks again every --interval seconds while runs are live. A run is stopped at its decision (stop_when_decided), and a live run the judge calls failed (no metrics past the no-telemetry deadline: 15 run-minutes and at least 120 s of wall clock) whatever the settings, the round's reference job is started beside its candidates and stopped as the monitor does (experiment.yaml reference: beside), each decision is printed as its pull request comment's headline would say it, with the run's figure (its judgement's seconds per rollout, as `topo status` and the record show it; a candidate faster at equal run age first as the provisional winner, better-at-equal-age, whose job runs on until the full-run guard settles its final decision), a run that ended is recorded in experiments/<id>.json and .md as the record workflow records a merged (decided better, or the baseline) or closed pull request, and each reference job of a round that ended among the record's reference runs with the GPU-minutes it held (--no-record leaves that to `topo record`). It never submits a candidate (`topo submit` does). Exit 0 once every watched run is decided and ended (and recorded). Ctrl-C lets the look under way finish (a stop it began completes) and leaves the runs as they are, exiting 130 (0 when that look left nothing to watch); its memory is .topo/watch/<experiment>.json, so a second `topo watch` resumes. With --json: one object per event, one per line (schemas/cli/watch.schema.json).",
    options: [
      {
        name: 'interval',
        short: 'i',
        type: 'number',
        min: 1,
        max: 3600,
        value: 'SECONDS',
        description: 'seconds between two passes while runs are live',
        default: '60',
      },
      {
        name: 'no-record',
        type: 'boolean',
        description: 'do not write the record (`topo record` does it later)',
      },
      TOPOLOGIES_OPTION,
      ...TELEMETRY_OPTIONS,
      JSON_OPTION,
    ],
    examples: [
      'topo watch topology-opt-vavam-ord-20261202',
      'topo watch topology-opt-vavam-ord-20261202 more-workers --json',
    ],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const parsed = parseOptions(watchCommand.help.options, args, io.env);
    const [id, ...names] = parsed.positionals;
    if (!id) throw new UsageError('give the experiment id (and the candidates to watch)');
    const dir = str(parsed, 'topologies') ?? 'topologies';
    const experiment = loadExperiment(io, id, dir);
    const t = telemetryOptions(telemetryValues(parsed), io, experiment.cluster);
    if (!t.cluster) throw new ConfigError(`cluster ${experiment.cluster} not found`);
    await ensurePrometheus(t.prometheus);
    const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
    try {
      const now = () => Date.now() / 1000;
      const log = (m: string) => io.stderr(`${m}\n`);
      // a job a submit interrupted between hold and release left held is released on the way
      const port = slurmMonitorPort(slurm, [], { releaseAbandonedHolds: { now, log } });
      const targets = await watchedTargets(io, parsed, { experiment, dir, names, port });
      if (!targets.length) {
        io.stderr(
          `topo watch: no live or unrecorded run of ${id} to watch (topo submit a candidate first)\n`,
        );
        return EXIT.ok;
      }
      const session = newSession(io, parsed, { experiment, dir, t, slurm, port, targets });
      return await watchLoop(io, session);
    } finally {
      await slurm.close();
    }
  },
};

/** A watched candidate: its file as checked, and the run of it the watch follows. */
interface Target {
  name: string;
  file: string;
  hash: string;
  details: CandidateDetails;
  candidate: Awaited<ReturnType<typeof candidateOf>>['candidate'];
  change: Record<string, string>;
  job: RunJob;
  pr: number;
}

/** The candidate files of the experiment's folder, by name (sorted: a candidate's pull request number). */
function candidateNames(io: CliIO, dir: string, id: string): string[] {
  const folder = resolve(io.cwd, dir, id);
  return readdirSync(folder)
    .map((f) => /^([a-z0-9][a-z0-9-]*)\.ya?ml$/.exec(f)?.[1])
    .filter((c): c is string => !!c && c !== 'experiment')
    .sort();
}

function recordOf(io: CliIO, id: string): ExperimentRecord | null {
  const text = readRecord(io, id);
  return text === null ? null : parseRecord(text, recordPaths(id).json);
}

/**
 * The runs to watch: each named candidate's newest run of its file's topology (none: exit 1), or
 * every candidate with one that is live, or that ended and the record does not hold yet.
 */
async function watchedTargets(
  io: CliIO,
  parsed: Parsed,
  x: { experiment: Experiment; dir: string; names: string[]; port: MonitorPorts['slurm'] },
): Promise<Target[]> {
  const id = x.experiment.experiment_id;
  const jobs = await x.port.jobs(id);
  const files = candidateNames(io, x.dir, id);
  const ran = new Set(jobs.map((j) => parseRunName(j.name, id)?.candidate));
  const wanted = x.names.length ? [...new Set(x.names)] : files.filter((f) => ran.has(f));
  const record = recordOf(io, id);
  const out: Target[] = [];
  for (const name of wanted) {
    const target = await candidateOf(io, parsed, x.experiment, x.dir, name);
    // a job that never ran (a submit interrupted by Ctrl-C cancels the job it held) is no run of it
    const job = jobs
      .filter((j) => {
        const p = parseRunName(j.name, id);
        return p?.candidate === name && p.hash === target.hash && !endedWithoutRunning(j);
      })
      .sort((a, b) => Number(a.jobId) - Number(b.jobId))
      .at(-1);
    if (!job && x.names.length)
      throw new FindingError(
        `${name} has no run of the topology its file describes (${target.hash}) on cluster ${x.experiment.cluster}: topo submit ${target.file} first`,
      );
    if (!job) continue;
    const held = record?.runs.some(
      (r) => r.name === name && r.run_name === job.name && r.status !== 'pending',
    );
    if (!x.names.length && !isLive(job.status) && held) continue;
    out.push({ ...target, name, job, pr: files.indexOf(name) + 1, change: changeOf(target.details.diff) });
  }
  return out;
}

/** One watch: its ports, its options and what it printed and recorded so far. */
interface Session {
  experiment: Experiment;
  id: string;
  t: TelemetryOptions;
  targets: Target[];
  ports: MonitorPorts;
  /** The watch's memory (the ports read and write it) and how it is written to its file. */
  state: LocalWatchState;
  save(): void;
  /** The reference sources rendered from the checkout (their file's path → submission, topology). */
  sources: Map<string, RenderedSource | null>;
  renderSource(path: string): Promise<RenderedSource | null>;
  interval: number;
  json: boolean;
  record: boolean;
  /** Per run: the last decision and figure printed, whether its end was printed, and what the record says. */
  seen: Map<string, { decision?: string; ended?: boolean; recorded?: string; figure?: number }>;
}

interface RenderedSource {
  topology: Topology;
  hash: string;
  submission: NonNullable<Awaited<ReturnType<typeof renderCandidateFile>>['submission']>;
}

/** The watch's memory in the checkout: .topo/watch/<experiment>.json (never committed). */
export function watchStatePath(cwd: string, id: string): string {
  return join(cwd, '.topo', 'watch', `${id}.json`);
}

function loadState(file: string): LocalWatchState {
  if (!existsSync(file)) return emptyWatchState();
  try {
    const state = JSON.parse(readFileSync(file, 'utf8')) as LocalWatchState;
    if (state.schema_version !== 1 || typeof state.comments !== 'object' || !Array.isArray(state.references))
      throw new Error('not a topo watch state (schema_version 1, comments, references)');
    return state;
  } catch (e) {
    throw new ConfigError(
      `${file}: ${(e as Error).message}; delete it to start the watch afresh (the runs keep running)`,
    );
  }
}

/** What a watch is started with: the experiment, its telemetry and Slurm, and the runs to follow. */
interface SessionInputs {
  experiment: Experiment;
  dir: string;
  t: TelemetryOptions;
  slurm: SlurmClient;
  port: MonitorPorts['slurm'];
  targets: Target[];
}

function newSession(io: CliIO, parsed: Parsed, x: SessionInputs): Session {
  const id = x.experiment.experiment_id;
  const file = watchStatePath(io.cwd, id);
  const sources = new Map<string, RenderedSource | null>();
  const renderSource = async (path: string) => {
    if (!sources.has(path)) sources.set(path, await rendered(io, parsed, path));
    return sources.get(path) ?? null;
  };
  const state = loadState(file);
  const save = () => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(state, null, 2)}\n`);
  };
  return {
    experiment: x.experiment,
    id,
    t: x.t,
    targets: x.targets,
    ports: sessionPorts(io, x, { state, save, sources, renderSource }),
    state,
    save,
    sources,
    renderSource,
    interval: num(parsed, 'interval') ?? 60,
    json: flag(parsed, 'json'),
    record: !flag(parsed, 'no-record'),
    seen: new Map(),
  };
}

/** The monitor's ports over the local checkout: its runs, the record's references and the watch's memory. */
function sessionPorts(
  io: CliIO,
  x: SessionInputs,
  s: Pick<Session, 'state' | 'save' | 'sources' | 'renderSource'>,
): MonitorPorts {
  const id = x.experiment.experiment_id;
  return localMonitorPorts({
    experiment: x.experiment,
    cluster: x.t.cluster?.config as NonNullable<TelemetryOptions['cluster']>['config'],
    timeScale: x.t.timeScale,
    prometheus: x.t.prometheus,
    scrapeSeconds: x.t.stepSeconds,
    slurm: x.port,
    runs: x.targets.map((r) => ({
      candidate: r.name,
      runName: r.job.name,
      pr: r.pr,
      topology: r.details.expanded,
      ...(r.job.submitTs ? { requestedAt: r.job.submitTs * 1000 } : {}),
    })),
    references: () => {
      const record = recordOf(io, id);
      return record ? recordedReferences(record) : {};
    },
    topologyOf: (path) => s.sources.get(path)?.topology,
    submitReference: (request) => submitReference(io, x, s.renderSource, request),
    state: s.state,
    save: s.save,
    login: io.env.USER || io.env.LOGNAME || 'topo',
    now: () => Date.now() / 1000,
  });
}

/** A candidate file of the checkout rendered for submission; null (and why, on stderr) when it cannot be. */
async function rendered(io: CliIO, parsed: Parsed, path: string): Promise<RenderedSource | null> {
  const { report, submission } = await renderCandidateFile(
    path,
    validateOptionsFor(io, str(parsed, 'clusters'), undefined, true),
  );
  const details = report.candidate as CandidateDetails | undefined;
  if (!submission || !details) {
    const why = report.errors.map((e) => `${e.file}:${e.line}: ${e.message}`).join('; ');
    io.stderr(`topo watch: the reference ${path} cannot be rendered: ${why || 'not a candidate file'}\n`);
    return null;
  }
  return { topology: details.expanded, hash: hash8(details.expanded), submission };
}

/**
 * The round's reference job, submitted as the monitor's submit port does: the best's file in the
 * checkout under the Request's run name, refused when that file no longer describes the recorded
 * topology (the record keeps what was measured).
 */
async function submitReference(
  io: CliIO,
  x: { experiment: Experiment; t: TelemetryOptions; slurm: SlurmClient },
  render: (path: string) => Promise<RenderedSource | null>,
  request: RunRequest,
): ReturnType<MonitorPorts['submit']> {
  const source = await render(request.path);
  if (!source || source.hash !== request.topologyHash) {
    io.stderr(
      `topo watch: no reference job: ${request.path} ${source ? `describes topology ${source.hash}, not the recorded ${request.topologyHash}` : 'cannot be rendered'}\n`,
    );
    return { refused: true };
  }
  const result = await submitCandidate(
    { slurm: x.slurm, log: (m) => io.stderr(`${m}\n`) },
    {
      experimentId: x.experiment.experiment_id,
      cluster: x.t.cluster?.name ?? x.experiment.cluster,
      submission: withRunName(source.submission, request.runName),
      maxParallel: x.experiment.max_parallel,
    },
  );
  return result.status === 'submitted' || result.status === 'existing' ? { jobId: result.jobId } : undefined;
}

/** Passes until every watched run is decided and ended (exit 0), or Ctrl-C (exit 130). */
async function watchLoop(io: CliIO, s: Session): Promise<number> {
  const interrupts = io.interrupts?.();
  const signal = interrupts?.signal;
  try {
    for (;;) {
      const source = referenceSourceOf(recordOf(io, s.id) ?? ({ runs: [] } as unknown as ExperimentRecord));
      if (source) await s.renderSource(source.path);
      const report = await monitorPass(s.ports, passOptions(s.t));
      for (const e of [...report.errors, ...report.warnings]) io.stderr(`topo watch: ${e}\n`);
      const events = [...eventsOf(s, report), ...recordEnded(io, s, report)];
      for (const e of events) io.stdout(s.json ? `${JSON.stringify(e)}\n` : `${e.text}\n`);
      if (allDone(s, report)) {
        closeQueuedReferences(s, report);
        if (!s.json) io.stdout(`Every watched run of ${s.id} is decided and ended.\n`);
        return EXIT.ok;
      }
      if (signal?.aborted || !(await pause(s.interval, signal))) return interrupted(io, s);
    }
  } finally {
    interrupts?.release();
  }
}

/** The action's pass options: evaluations on the minute, every second for a compressed twin. */
function passOptions(t: TelemetryOptions) {
  return { tickSeconds: t.timeScale > 1 ? 1 : 60 };
}

/** Waits `seconds`; false when Ctrl-C came first. */
async function pause(seconds: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(seconds * 1000, undefined, signal ? { signal } : {});
    return true;
  } catch {
    return false;
  }
}

function interrupted(io: CliIO, s: Session): number {
  io.stderr(
    `topo watch: interrupted: the runs are left as they are; \`topo watch ${s.id}\` resumes (its memory: ${watchStatePath('.', s.id)})\n`,
  );
  return EXIT.interrupted;
}

/** One line of `--json` (schemas/cli/watch.schema.json) and its text. */
interface WatchEvent {
  schema_version: 1;
  event:
    | 'decided'
    | 'stopped'
    | 'ended'
    | 'recorded'
    | 'refigured'
    | 'reference-started'
    | 'reference-stopped';
  experiment_id: string;
  candidate: string;
  run_name: string;
  job_id: string | null;
  state: string;
  decision: { state: string; reference: DecisionReference; relative_change: unknown } | null;
  headline: string;
  /** THE figure of its judgement at this pass, as `topo status --json` gives it. */
  seconds_per_rollout: StatusRow['seconds_per_rollout'];
  record: { status: string; file: string; changed: boolean } | null;
  text: string;
}

const FINAL = new Set(['finished', 'stopped', 'failed']);

function eventOf(s: Session, c: CandidateReport, event: WatchEvent['event'], text: string): WatchEvent {
  const d = c.view.observation.decision;
  return {
    schema_version: 1,
    event,
    experiment_id: s.id,
    candidate: c.candidate,
    run_name: c.runName,
    job_id: c.view.jobId ?? null,
    state: c.state,
    decision: d
      ? { state: d.state, reference: d.reference, relative_change: d.relative_change ?? null }
      : null,
    headline: headlineLine(c.candidate, viewStanding(c.view)).replace(/`/g, ''),
    seconds_per_rollout: figureJson(viewFigure(c.view)),
    record: null,
    text,
  };
}

/** What this pass changed: a new decision, a stop, an end, a reference job started or stopped. */
function eventsOf(s: Session, report: PassReport): WatchEvent[] {
  const watched = new Set(s.targets.map((t) => t.job.name));
  const out: WatchEvent[] = [];
  for (const c of report.candidates) {
    const seen = s.seen.get(c.runName) ?? {};
    s.seen.set(c.runName, seen);
    const headline = headlineLine(c.candidate, viewStanding(c.view)).replace(/`/g, '');
    if (!watched.has(c.runName)) {
      if (c.submitted)
        out.push(
          eventOf(
            s,
            c,
            'reference-started',
            `reference job ${c.runName} (Slurm job ${c.submitted}) started beside the candidates`,
          ),
        );
      if (c.cancelled)
        out.push(
          eventOf(s, c, 'reference-stopped', `reference job ${c.runName} stopped: ${whyStopped(c, true)}`),
        );
      continue;
    }
    const d = c.view.observation.decision?.state;
    // the reference's own `reference` is no decision: it ends, and is recorded, as the others
    if (d && d !== 'measuring' && d !== 'reference' && d !== seen.decision) {
      seen.decision = d;
      out.push(eventOf(s, c, 'decided', `${headline}${figureText(c)}`));
    }
    if (c.cancelled)
      out.push(
        eventOf(
          s,
          c,
          'stopped',
          `  stopped Slurm job ${c.cancelled} of ${c.candidate}: ${whyStopped(c, false)}`,
        ),
      );
    if (FINAL.has(c.state) && !seen.ended) {
      seen.ended = true;
      out.push(eventOf(s, c, 'ended', `${headline} (${c.state})${figureText(c)}`));
    } else if (seen.ended) out.push(...refigured(s, c, seen.figure));
    seen.figure = viewFigure(c.view)?.value ?? seen.figure;
  }
  return out;
}

/**
 * A loser pruned against the leading candidate, printed at the leader's estimate then, once the
 * leader settles: its figure re-anchored on the leader's settled one (src/analysis/figure.ts).
 */
function refigured(s: Session, c: CandidateReport, printed: number | undefined): WatchEvent[] {
  const f = viewFigure(c.view);
  const d = c.view.observation.decision;
  if (!f || printed === undefined || f.value === printed || !againstLiveRun(d)) return [];
  const leader = f.reference ? `${f.reference.name}'s settled ${f.reference.value} s` : 'its leader settled';
  return [eventOf(s, c, 'refigured', `  ${c.candidate}: re-anchored on ${leader}${figureText(c)}`)];
}

/** " · 8.275 s per rollout [8.125–8.427]": the run's figure as its judgement gives it (its comment's value line). */
function figureText(c: CandidateReport): string {
  const f = viewFigure(c.view);
  if (!f) return '';
  const range = f.low < f.high ? ` [${f.low.toFixed(3)}–${f.high.toFixed(3)}]` : '';
  return ` · ${f.value.toFixed(3)} s per rollout${range}`;
}

/** Why the pass stopped a run: it failed (the judge's failure), else its decision or the round's plan. */
function whyStopped(c: CandidateReport, reference: boolean): string {
  const f = c.view.observation.failure;
  if (c.state === 'failed') return `it failed (${f ? `${f.kind}: ${f.message}` : 'no reason given'})`;
  return reference ? 'no open decision needs it' : 'at its decision';
}

/**
 * Each watched run that ended, recorded as the record workflow records its pull request: merged
 * when it is the baseline or decided better, else closed with its headline as the reason.
 */
function recordEnded(io: CliIO, s: Session, report: PassReport): WatchEvent[] {
  if (!s.record) return [];
  const out: WatchEvent[] = [];
  for (const target of s.targets) {
    const c = report.candidates.find((x) => x.runName === target.job.name);
    const seen = s.seen.get(target.job.name);
    if (!c || !seen || seen.recorded || !FINAL.has(c.state)) continue;
    const accept = !target.candidate.parent || c.view.observation.decision?.state === 'better';
    const result = recordLocally({
      experiment: s.experiment,
      ...(s.t.cluster ? { cluster: s.t.cluster.config } : {}),
      recordText: readRecord(io, s.id),
      candidate: target.candidate,
      file: target.file,
      hash: target.hash,
      change: target.change,
      run: { runName: c.runName, jobId: c.view.jobId ?? target.job.jobId, observation: c.view.observation },
      accept,
      reason: accept ? null : headlineLine(c.candidate, viewStanding(c.view)).replace(/`/g, ''),
      at: new Date().toISOString(),
    });
    seen.recorded = 'refused' in result ? 'refused' : result.kind;
    out.push(recordedEvent(io, s, c, result));
  }
  return [...out, ...recordReferences(io, s, report)];
}

/**
 * Each reference job of a round that ended, recorded among the experiment's reference runs with the
 * GPU-minutes it held (as the record workflow records a closed pull request's reference jobs).
 */
function recordReferences(io: CliIO, s: Session, report: PassReport): WatchEvent[] {
  const out: WatchEvent[] = [];
  for (const h of s.state.references) {
    const c = report.candidates.find((x) => x.runName === h.request.runName);
    if (h.recorded || !h.run || !c || !FINAL.has(c.state)) continue;
    const result = recordReferenceLocally({
      experiment: s.experiment,
      ...(s.t.cluster ? { cluster: s.t.cluster.config } : {}),
      recordText: readRecord(io, s.id),
      seen: {
        of: h.request.candidate,
        runName: h.request.runName,
        jobId: h.run.jobId ?? c.view.jobId ?? null,
        pullRequest: null,
        observation: c.view.observation,
        ended: h.outcome?.kind ?? c.state,
        candidates: s.targets.map((t) => t.candidate.name),
        at: new Date().toISOString(),
      },
    });
    writeRecordFiles(io, result.files);
    h.recorded = true;
    s.save();
    const file = recordPaths(s.id).json;
    const gpu = result.record.reference_runs?.find((r) => r.run_name === c.runName)?.gpu_minutes;
    out.push({
      ...eventOf(
        s,
        c,
        'recorded',
        `  recorded reference job ${c.runName} (${gpu ?? '?'} GPU-minutes) in ${file}`,
      ),
      record: { status: 'reference', file, changed: !result.unchanged },
    });
  }
  return out;
}

function recordedEvent(
  io: CliIO,
  s: Session,
  c: CandidateReport,
  result: ReturnType<typeof recordLocally>,
): WatchEvent {
  const file = recordPaths(s.id).json;
  if ('refused' in result) {
    io.stderr(`topo watch: ${result.refused}\n`);
    return {
      ...eventOf(s, c, 'recorded', `  not recorded: ${result.refused}`),
      record: { status: 'refused', file, changed: false },
    };
  }
  writeRecordFiles(io, result.files);
  const best = result.record.current_best.topology;
  return {
    ...eventOf(
      s,
      c,
      'recorded',
      `  recorded ${c.candidate} as ${result.kind} in ${file} (best: ${best ?? 'none yet'})`,
    ),
    record: { status: result.kind, file, changed: !result.unchanged },
  };
}

/**
 * Done: every watched run ended (or is decided while the experiment does not stop runs at their
 * decision) and is recorded, and no reference job of the round still runs or waits.
 */
function allDone(s: Session, report: PassReport): boolean {
  const watched = new Set(s.targets.map((t) => t.job.name));
  const keepsRunning = s.experiment.stop_when_decided === false;
  const runs = s.targets.map((t) => report.candidates.find((c) => c.runName === t.job.name));
  const each = runs.every((c) => {
    if (!c) return false;
    const d = c.view.observation.decision?.state;
    if (keepsRunning && d && d !== 'measuring' && !FINAL.has(c.state)) return true;
    return FINAL.has(c.state) && (!s.record || !!s.seen.get(c.runName)?.recorded);
  });
  const references = report.candidates.filter((c) => !watched.has(c.runName));
  // a reference Request not submitted yet is withdrawn when the watch ends (closeQueuedReferences)
  return each && references.every((c) => FINAL.has(c.state) || !c.view.jobId);
}

/** A reference Request the round no longer needs and that has no job yet is withdrawn (never submitted). */
function closeQueuedReferences(s: Session, report: PassReport): void {
  const jobless = new Set(report.candidates.filter((c) => !c.view.jobId).map((c) => c.runName));
  const at = new Date().toISOString();
  for (const h of s.state.references)
    if (!h.outcome && jobless.has(h.request.runName))
      h.outcome = {
        kind: 'cancelled',
        at,
        evidence: ['every watched run was decided and ended before it started'],
      };
  s.save();
}
