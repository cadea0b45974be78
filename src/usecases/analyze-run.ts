// One run judged from Prometheus as of a moment: the path `topo analyze` and the detector bench share,
// through the judge (src/judge: the same observation and Decision as the monitor's). Any run_name
// (not only topo-… names); by default as of now, or as of its last sample when the run has ended,
// so a finished run keeps the verdict its data supports instead of turning stale.

import type { DetectorSettings } from '../analysis/detector.js';
import type { RunAnalysis } from '../analysis/observe.js';
import type { JudgedExperiment, Reference } from '../judge/decide.js';
import type { RunJob } from '../judge/job.js';
import { decideRunOf, type Judgement } from '../judge/judge.js';
import { observeRunOf, type RunToJudge } from '../judge/observe.js';
import { type ExperimentTelemetry, readTelemetry, seriesOf } from '../judge/telemetry.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import { anyRunSelector, type Quantity } from '../telemetry/queries.js';
import type { Topology } from '../types/generated/topology.js';

export interface AnalyzeRunInput {
  prometheus: PrometheusClient;
  runName: string;
  timeScale: number;
  stepSeconds: number;
  /** The clock (unix seconds). */
  nowTs: number;
  /** Judge as of this moment (unix seconds), as the monitor would have then; default: see `ended`. */
  atTs?: number | null;
  /** Look-back from the evaluation time, Prometheus minutes. */
  minutes: number;
  /** Rollouts in flight, when no topology is given. */
  inFlight?: number | null;
  topology?: Topology;
  settings?: Partial<DetectorSettings>;
  /** Only these quantities (the bench asks for the verdict's only). */
  quantities?: readonly Quantity[];
  /**
   * `--against`: decide against this run, judged as of the same moment (or as of its own end when
   * it ended before), with these settings (`--min-improvement`).
   */
  against?: string;
  experiment?: JudgedExperiment;
  /**
   * The run's Slurm job (src/judge/job.ts) when the cluster is known: judged from its start, as of
   * its end, like the monitor; and the experiment's wall time and rollouts (experimentLimits).
   */
  jobOf?: (runName: string) => Promise<RunJob | undefined>;
  limits?: { wallMinutes: number | null; expectedRollouts: number | null };
}

export interface AnalyzeRunResult {
  analysis: RunAnalysis;
  /** The judge's judgement (state, comparisons, the Decision against `against`). */
  judgement: Judgement;
  telemetry: ExperimentTelemetry;
  /** The moment judged (unix seconds). */
  atTs: number;
  /** No --at and no sample for a while: judged as of the run's last sample. */
  ended: boolean;
  /** The run `against` named, judged. */
  reference?: AnalyzeRunResult;
}

/** The run's series over the look-back, as the judge reads it. */
async function readRun(i: AnalyzeRunInput): Promise<{ run: RunToJudge; telemetry: ExperimentTelemetry }> {
  const job = await i.jobOf?.(i.runName);
  const at = Math.floor(i.atTs ?? i.nowTs);
  const start = Math.floor((at - i.minutes * 60) / i.stepSeconds) * i.stepSeconds;
  const telemetry = await readTelemetry(
    i.prometheus,
    anyRunSelector(i.runName),
    { start, end: at, stepSeconds: i.stepSeconds },
    {
      timeScale: i.timeScale,
      scrapeSeconds: i.stepSeconds,
      ...(i.quantities ? { quantities: i.quantities } : {}),
    },
  );
  const run: RunToJudge = {
    runName: i.runName,
    series: seriesOf(telemetry, i.runName),
    missing: telemetry.missing,
    clock: { nowTs: at, timeScale: i.timeScale, stepSeconds: i.stepSeconds, ...i.limits },
    ...(job ? { job } : {}),
    topology: i.topology,
    inFlight: i.inFlight ?? null,
    settings: i.settings,
    fixedTime: i.atTs != null,
  };
  return { run, telemetry };
}

export async function analyzeRun(i: AnalyzeRunInput): Promise<AnalyzeRunResult> {
  const { run, telemetry } = await readRun(i);
  const observed = observeRunOf(run);
  const { analysis, ended, atTs } = observed;
  if (!analysis) throw new Error(`${i.runName}: nothing observed`); // a run read without a job always is
  const reference = i.against
    ? await analyzeRun({
        ...i,
        runName: i.against,
        nowTs: atTs,
        atTs: null,
        inFlight: null,
        against: undefined,
      })
    : undefined;
  const judgement = decideRunOf(run, observed, {
    standing: { experiment: i.experiment ?? {} },
    candidate: { candidate: i.runName, pr: 0, requested: true },
    reference: reference ? runReference(reference) : null,
  });
  return { analysis, judgement, telemetry, atTs, ended, ...(reference ? { reference } : {}) };
}

/** A run named by a person as the reference (`--against`): its verdict as judged. */
function runReference(r: AnalyzeRunResult): Reference {
  const verdict = r.analysis.observation.verdict;
  return {
    role: 'run',
    name: r.judgement.observation.run_name,
    verdict,
    value: verdict.value ?? null,
    live: true,
  };
}

/** `--at`: an ISO 8601 time or unix seconds (or milliseconds). */
export function parseAt(text: string): number | null {
  const t = text.trim();
  if (/^\d+(\.\d+)?$/.test(t)) {
    const n = Number(t);
    return n > 1e11 ? n / 1000 : n;
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return null;
  const ms = Date.parse(t);
  return Number.isFinite(ms) ? ms / 1000 : null;
}
