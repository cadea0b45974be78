// The query catalog: for every quantity the analysis reads, the recording-rule query AlpaSim ships
// and a fallback computed from the raw metrics (older AlpaSim, or a Prometheus without the rules).
// Queries select a whole experiment at once (`run_name=~"topo-<experiment>-.*"`): one query per
// quantity per pass, never one per candidate.
import { RAW_METRICS, RECORDING_RULES, ROLLOUT_STATUS } from '../catalog/alpasim.js';
import { RUN_NAME } from '../topology/run-name.js';
import type { PrometheusClient, PromResult, PromSeries } from './prometheus.js';

export const QUANTITIES = [
  'secondsPerRolloutAvg',
  'secondsPerRolloutRate5m',
  'rolloutsTotal',
  'rolloutsFailed',
  'elapsed',
  'queueDepthMax',
  'queueDepthMin',
  'idleFraction',
  'rolloutDurationP95',
  'rpcDurationP95',
  'gpuUtil',
  'gpuMemory',
  'gpuMemoryTotal',
  'gpuMemoryPressure',
  // DCGM's free framebuffer: the headroom (total − used overstates it by the driver-reserved memory)
  'gpuMemoryFree',
  'processCpu',
  'hostMemAvailable',
  'hostMemTotal',
  'targetsUp',
  // Issue 14.7 (h14): the skill's reading rules, event-loop blocking and the hottest process of each group.
  'rpcBlockingP95',
  'processCpuMaxByGroup',
  // throughput estimators (Little's law): see throughputQueries
  'rolloutDurationSum',
  'rolloutDurationCount',
  'activeRollouts',
] as const;
export type Quantity = (typeof QUANTITIES)[number];

export interface QuantityQuery {
  quantity: Quantity;
  /** Recording-rule query, or null when AlpaSim ships no rule for it. */
  rule: string | null;
  /** The same value from the raw metrics. */
  fallback: string;
}

const EXPERIMENT_ID = /^[a-z0-9][a-z0-9_.-]{0,79}$/;

/** PromQL regex escape for a literal inside a double-quoted string. */
function promRegexLiteral(s: string): string {
  return s.replace(/[.+*?^$()[\]{}|\\]/g, (c) => `\\\\${c}`);
}

/** The selector of every run of one experiment. */
export function experimentSelector(experimentId: string): string {
  if (!EXPERIMENT_ID.test(experimentId))
    throw new Error(
      `experiment id ${JSON.stringify(experimentId)} is not valid: expected ${EXPERIMENT_ID} (e.g. topology-opt-vam-local-20260101)`,
    );
  return `run_name=~"topo-${promRegexLiteral(experimentId)}-.*"`;
}

/**
 * The selector of any run by its exact `run_name` (runs launched by hand or by AlpaSim's own scripts
 * too): the value is quoted as a PromQL string, so it can hold any printable character.
 */
export function anyRunSelector(runName: string): string {
  if (!runName || runName.length > 253 || /[\u0000-\u001f\u007f]/.test(runName))
    throw new Error(
      `run name ${JSON.stringify(runName)} is not valid: expected 1-253 printable characters (the run_name label of the run's metrics)`,
    );
  return `run_name="${runName.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The selector of one run. */
export function runSelector(runName: string): string {
  if (!RUN_NAME.test(runName))
    throw new Error(
      `run name ${JSON.stringify(runName)} is not valid: expected topo-<experiment>-<candidate>-<hash8>`,
    );
  return anyRunSelector(runName);
}

export interface CatalogOptions {
  /** The twin compresses time: Prometheus windows shrink by this factor (1 for real AlpaSim). */
  timeScale?: number;
  scrapeSeconds?: number;
}

/** A PromQL duration for `runSeconds` of run time, never shorter than four scrapes. */
function window(runSeconds: number, o: CatalogOptions): string {
  const s = Math.max(Math.round(runSeconds / (o.timeScale ?? 1)), 4 * (o.scrapeSeconds ?? 5));
  return `${s}s`;
}

/** Every quantity's rule and fallback for a selector (`experimentSelector` or `runSelector`). */
export function queryCatalog(
  selector: string,
  options: CatalogOptions = {},
): Record<Quantity, QuantityQuery> {
  const sel = `{${selector}}`;
  const by = 'run_uuid, run_name';
  const w: Windows = { w5m: window(300, options), w1m: window(60, options), w30s: window(30, options) };
  return {
    ...rolloutQueries(selector, sel, by, w),
    ...runtimeQueries(sel, by, w),
    ...gpuQueries(sel, by),
    ...hostQueries(sel, by, w),
    ...hottestQueries(sel, by, w),
    ...throughputQueries(sel, by),
  };
}

/** The rate windows, scaled to the run's time. */
interface Windows {
  w5m: string;
  w1m: string;
  w30s: string;
}

const q = (quantity: Quantity, rule: string | null, fallback: string): QuantityQuery => ({
  quantity,
  rule,
  fallback,
});

/** The run's progress: seconds per rollout (all along and over 5 minutes), rollouts done and failed, time. */
function rolloutQueries(selector: string, sel: string, by: string, { w5m }: Windows) {
  const R = RAW_METRICS;
  return {
    secondsPerRolloutAvg: q(
      'secondsPerRolloutAvg',
      `${RECORDING_RULES.secondsPerRolloutAvg}${sel}`,
      `(max by (${by}) (${R.simulationElapsed}${sel}) / sum by (${by}) (${R.rolloutsTotal}${sel})) and on (${by}) (sum by (${by}) (${R.rolloutsTotal}${sel}) > 0)`,
    ),
    secondsPerRolloutRate5m: q(
      'secondsPerRolloutRate5m',
      `${RECORDING_RULES.secondsPerRolloutRate5m}${sel}`,
      `(max by (${by}) (increase(${R.simulationElapsed}${sel}[${w5m}])) / sum by (${by}) (increase(${R.rolloutsTotal}${sel}[${w5m}]))) and on (${by}) (sum by (${by}) (increase(${R.rolloutsTotal}${sel}[${w5m}])) > 0)`,
    ),
    rolloutsTotal: q(
      'rolloutsTotal',
      `${RECORDING_RULES.rolloutsCompleted}${sel}`,
      `sum by (${by}) (${R.rolloutsTotal}${sel})`,
    ),
    rolloutsFailed: q(
      'rolloutsFailed',
      null,
      `sum by (${by}) (${R.rolloutsTotal}{${selector},status="${ROLLOUT_STATUS.failed}"})`,
    ),
    elapsed: q('elapsed', null, `max by (${by}) (${R.simulationElapsed}${sel})`),
  };
}

/** The runtime's view of the services: queue depths, event-loop idle share, rollout and RPC p95. */
function runtimeQueries(sel: string, by: string, { w1m }: Windows) {
  const R = RAW_METRICS;
  return {
    queueDepthMax: q(
      'queueDepthMax',
      `${RECORDING_RULES.queueDepthMax}${sel}`,
      `max by (${by}, service) (${R.queueDepth}${sel})`,
    ),
    queueDepthMin: q(
      'queueDepthMin',
      `${RECORDING_RULES.queueDepthMin}${sel}`,
      `min by (${by}, service) (${R.queueDepth}${sel})`,
    ),
    idleFraction: q(
      'idleFraction',
      `${RECORDING_RULES.idleFraction}${sel}`,
      `sum by (${by}) (${R.eventLoopIdle}${sel}) / sum by (${by}) (${R.eventLoopIdle}${sel} + ${R.eventLoopPoll}${sel} + ${R.eventLoopWork}${sel})`,
    ),
    rolloutDurationP95: q(
      'rolloutDurationP95',
      `${RECORDING_RULES.rolloutDurationP95}${sel}`,
      `histogram_quantile(0.95, sum by (${by}, le) (rate(${R.rolloutDuration}_bucket${sel}[${w1m}])))`,
    ),
    rpcDurationP95: q(
      'rpcDurationP95',
      `${RECORDING_RULES.rpcDurationP95}${sel}`,
      `histogram_quantile(0.95, sum by (${by}, method, le) (rate(${R.rpcDuration}_bucket${sel}[${w1m}])))`,
    ),
  };
}

/** DCGM: utilisation and framebuffer memory per GPU. */
function gpuQueries(sel: string, by: string) {
  const R = RAW_METRICS;
  return {
    gpuUtil: q('gpuUtil', `${RECORDING_RULES.gpuUtil}${sel}`, `avg by (${by}, gpu) (${R.gpuUtil}${sel})`),
    gpuMemory: q(
      'gpuMemory',
      `${RECORDING_RULES.gpuMemory}${sel}`,
      `avg by (${by}, gpu) (${R.fbUsed}${sel}) / 1024`,
    ),
    gpuMemoryTotal: q(
      'gpuMemoryTotal',
      `${RECORDING_RULES.gpuMemoryTotal}${sel}`,
      `avg by (${by}, gpu) (${R.fbTotal}${sel}) / 1024`,
    ),
    gpuMemoryPressure: q(
      'gpuMemoryPressure',
      `${RECORDING_RULES.gpuMemoryPressure}${sel}`,
      `100 * sum by (${by}, node, gpu) (${R.fbUsed}${sel}) / (sum by (${by}, node, gpu) (${R.fbUsed}${sel}) + sum by (${by}, node, gpu) (${R.fbFree}${sel}))`,
    ),
    gpuMemoryFree: q('gpuMemoryFree', null, `min by (${by}, gpu) (${R.fbFree}${sel}) / 1024`),
  };
}

/** The host: CPU per process group, memory, and the scrape targets that are up. */
function hostQueries(sel: string, by: string, { w30s }: Windows) {
  const R = RAW_METRICS;
  return {
    processCpu: q(
      'processCpu',
      `${RECORDING_RULES.processCpu}${sel}`,
      `100 * sum by (${by}, groupname) (rate(${R.processCpu}${sel}[${w30s}]))`,
    ),
    hostMemAvailable: q(
      'hostMemAvailable',
      null,
      `min by (${by}) (${R.hostMemAvailable}${sel}) / 1073741824`,
    ),
    hostMemTotal: q('hostMemTotal', null, `max by (${by}) (${R.hostMemTotal}${sel}) / 1073741824`),
    targetsUp: q('targetsUp', null, `sum by (run_name) (up${sel})`),
  };
}

/** Issue 14.7 (h14): AlpaSim's rules for blocking p95 (by method) and the hottest process of each group. */
function hottestQueries(sel: string, by: string, { w1m, w30s }: Windows) {
  const R = RAW_METRICS;
  return {
    rpcBlockingP95: q(
      'rpcBlockingP95',
      `${RECORDING_RULES.rpcBlockingP95}${sel}`,
      `histogram_quantile(0.95, sum by (${by}, method, le) (rate(${R.rpcBlocking}_bucket${sel}[${w1m}])))`,
    ),
    processCpuMaxByGroup: q(
      'processCpuMaxByGroup',
      `${RECORDING_RULES.processCpuMaxByGroup}${sel}`,
      `max by (${by}, groupname) (100 * rate(${R.processCpuPerProcess}${sel}[${w30s}]))`,
    ),
  };
}

/** Rollout in flight and duration histogram per worker (Little's law); no recording rule exists for them. */
function throughputQueries(
  sel: string,
  by: string,
): Record<'rolloutDurationSum' | 'rolloutDurationCount' | 'activeRollouts', QuantityQuery> {
  const R = RAW_METRICS;
  // per worker: counters reset independently when a worker restarts; the analysis sums them
  const perWorker = `${by}, worker_id`;
  return {
    rolloutDurationSum: {
      quantity: 'rolloutDurationSum',
      rule: null,
      fallback: `sum by (${perWorker}) (${R.rolloutDuration}_sum${sel})`,
    },
    rolloutDurationCount: {
      quantity: 'rolloutDurationCount',
      rule: null,
      fallback: `sum by (${perWorker}) (${R.rolloutDuration}_count${sel})`,
    },
    activeRollouts: {
      quantity: 'activeRollouts',
      rule: null,
      fallback: `sum by (${by}) (${ACTIVE_ROLLOUTS}${sel})`,
    },
  };
}

/** AlpaSim's gauge of rollouts in flight (per worker). */
const ACTIVE_ROLLOUTS = 'alpasim_renderer_active_rollouts';

export interface QueryUsed {
  quantity: Quantity;
  query: string;
  source: 'rule' | 'raw';
  series: number;
}

export interface ExperimentTelemetry {
  /** Series of each quantity, grouped by run_name. */
  byRun: Map<string, Partial<Record<Quantity, PromSeries[]>>>;
  queries: QueryUsed[];
  /** Quantities for which neither the rule nor the fallback returned anything. */
  missing: Quantity[];
  /** HTTP errors per quantity (the pass goes on without that quantity). */
  errors: Array<{ quantity: Quantity; message: string }>;
}

export interface FetchWindow {
  start: number;
  end: number;
  stepSeconds: number;
}

/** One range query per quantity (plus its fallback when the rule returns nothing), split by run. */
export async function fetchTelemetry(
  client: PrometheusClient,
  selector: string,
  range: FetchWindow,
  options: CatalogOptions & { quantities?: readonly Quantity[] } = {},
): Promise<ExperimentTelemetry> {
  const catalog = queryCatalog(selector, options);
  const out: ExperimentTelemetry = { byRun: new Map(), queries: [], missing: [], errors: [] };
  const wanted = options.quantities ?? QUANTITIES;
  await Promise.all(
    wanted.map(async (quantity) => {
      const entry = catalog[quantity];
      let result: PromResult | undefined;
      let used: { query: string; source: 'rule' | 'raw' } | undefined;
      try {
        if (entry.rule) {
          result = await client.range(entry.rule, range.start, range.end, range.stepSeconds);
          used = { query: entry.rule, source: 'rule' };
        }
        if (!result || result.empty) {
          result = await client.range(entry.fallback, range.start, range.end, range.stepSeconds);
          used = { query: entry.fallback, source: 'raw' };
        }
      } catch (e) {
        out.errors.push({ quantity, message: (e as Error).message });
        return;
      }
      if (!result || !used) return;
      out.queries.push({ quantity, ...used, series: result.series.length });
      if (result.empty) out.missing.push(quantity);
      for (const s of result.series) {
        const run = s.labels.run_name;
        if (!run) continue;
        const rec = out.byRun.get(run) ?? {};
        rec[quantity] = [...(rec[quantity] ?? []), s];
        out.byRun.set(run, rec);
      }
    }),
  );
  // stable order for rendering and idempotent comments
  out.queries.sort((a, b) => QUANTITIES.indexOf(a.quantity) - QUANTITIES.indexOf(b.quantity));
  out.missing.sort((a, b) => QUANTITIES.indexOf(a) - QUANTITIES.indexOf(b));
  return out;
}
