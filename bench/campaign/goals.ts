// The issue's goals, judged per profile: each MET, MISSED (by how much) or UNKNOWN (a figure is
// absent, e.g. Optuna not installed): never a silent pass. CAMPAIGN_STRICT=1 makes the bench exit
// non-zero unless every goal is MET. The yardstick is the expected GPU-hours per right conclusion
// (issue 33): what a method spends divided by how often its concluded answer is within 2% of the
// space's best, so a cheap wrong answer is no bar to clear.

export type GoalStatus = 'MET' | 'MISSED' | 'UNKNOWN';

export interface Goal {
  status: GoalStatus;
  text: string;
}

/** Per-profile figures the goals read: GPU-hours per right conclusion per method; absent methods are undefined. */
export interface ProfileFigures {
  topo: number;
  manual: number;
  random?: number;
  asha?: number;
  /** Undefined when Optuna is not installed. */
  optuna?: number;
  /** topo's share of campaigns whose concluded answer is within 2%. */
  right: number;
  /** OOM runs started after the baseline, over all seeds. */
  oomRuns: number;
  /** Median |error| and interval coverage of the predictions after the baseline alone. */
  predictionError: number;
  coverage: number;
  /** The noise-aware floor: median GPU-hours to decide the best against the baseline, knowing it. */
  floor: number;
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : x === Number.POSITIVE_INFINITY ? '∞' : '—');
const pc = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');

function goal(ok: boolean | null, text: string, miss: string): Goal {
  if (ok === null) return { status: 'UNKNOWN', text };
  return ok ? { status: 'MET', text } : { status: 'MISSED', text: `${text}; missed by ${miss}` };
}

/** GPU-hours per right conclusion: mean spent ÷ share right (∞ when never right). */
export function perRight(spent: readonly number[], right: readonly boolean[]): number {
  if (spent.length === 0) return Number.NaN;
  const share = right.filter(Boolean).length / right.length;
  const mean = spent.reduce((a, b) => a + b, 0) / spent.length;
  return share > 0 ? mean / share : Number.POSITIVE_INFINITY;
}

/** Its 90% interval over the seeds (a percentile bootstrap over campaigns, a fixed generator). */
export function perRightInterval(
  spent: readonly number[],
  right: readonly boolean[],
  draws = 400,
): { low: number; high: number } {
  let a = 12345;
  const rand = () => {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    return a / 4294967296;
  };
  const n = spent.length;
  const values: number[] = [];
  for (let d = 0; d < draws; d++) {
    const idx = Array.from({ length: n }, () => Math.floor(rand() * n));
    values.push(
      perRight(
        idx.map((i) => spent[i]!),
        idx.map((i) => right[i]!),
      ),
    );
  }
  values.sort((x, y) => x - y);
  return { low: values[Math.floor(0.05 * (draws - 1))]!, high: values[Math.ceil(0.95 * (draws - 1))]! };
}

/** Issue 43's cost goal: GPU-hours per right conclusion at most this share of the seed's rule's (issue 33 had 50%). */
export const COST_SHARE_OF_MANUAL = 0.4;

function costGoals(f: ProfileFigures): Goal[] {
  const target = COST_SHARE_OF_MANUAL * f.manual;
  const others: Array<[string, number | undefined]> = [
    ['random', f.random],
    ['ASHA', f.asha],
    ['Optuna', f.optuna],
  ];
  const absent = others.filter(([, v]) => v === undefined || Number.isNaN(v)).map(([n]) => n);
  const bestOther = Math.min(...others.map(([, v]) => v ?? Number.POSITIVE_INFINITY));
  const known = !Number.isNaN(f.topo) && !Number.isNaN(f.manual);
  return [
    goal(
      known ? f.topo <= target : null,
      `GPU-hours per right conclusion: topo ${f1(f.topo)} ≤ ${(100 * COST_SHARE_OF_MANUAL).toFixed(0)}% of the seed's rule by hand's (${f1(target)} of ${f1(f.manual)}); topo is ${pc(f.topo / f.manual)} of it`,
      `${f1(f.topo - target)} GPU-h (${(f.topo / target).toFixed(2)}× the goal)`,
    ),
    goal(
      Number.isNaN(f.topo) || !Number.isFinite(f.floor) ? null : f.topo <= 1.5 * f.floor,
      `GPU-hours per right conclusion: topo ${f1(f.topo)} ≤ 1.5× the noise-aware floor ${f1(f.floor)} (${f1(1.5 * f.floor)}); topo is ${(f.topo / f.floor).toFixed(2)}× it`,
      `${f1(f.topo - 1.5 * f.floor)} GPU-h`,
    ),
    goal(
      absent.length || Number.isNaN(f.topo) ? null : f.topo < bestOther,
      `GPU-hours per right conclusion below random + decisions, ASHA and Optuna: topo ${f1(f.topo)} against ${others.map(([n, v]) => `${n} ${v === undefined ? 'absent' : f1(v)}`).join(', ')}${absent.length ? ` (not judged: ${absent.join(', ')} absent)` : ''}`,
      `${f1(f.topo - bestOther)} GPU-h`,
    ),
  ];
}

/** The goals of issue 33 for one profile. */
export function judgeGoals(f: ProfileFigures): Goal[] {
  return [
    ...costGoals(f),
    goal(
      Number.isFinite(f.right) ? f.right >= 0.95 : null,
      `concluded within 2% of the best in ${pc(f.right)} of campaigns (≥ 95%)`,
      `${(100 * (0.95 - f.right)).toFixed(1)} points`,
    ),
    goal(f.oomRuns === 0, `OOM runs started after the baseline: ${f.oomRuns} (0)`, `${f.oomRuns} run(s)`),
    goal(
      Number.isFinite(f.predictionError) && Number.isFinite(f.coverage)
        ? f.predictionError <= 0.05 && f.coverage >= 0.8
        : null,
      `prediction error after the baseline alone ${pc(f.predictionError)} (≤ 5%), interval coverage ${pc(f.coverage)} (≥ 80%)`,
      [
        f.predictionError > 0.05 ? `${(100 * (f.predictionError - 0.05)).toFixed(1)} points of error` : '',
        f.coverage < 0.8 ? `${(100 * (0.8 - f.coverage)).toFixed(1)} points of coverage` : '',
      ]
        .filter(Boolean)
        .join(' and '),
    ),
  ];
}

/** The bench's exit code: with CAMPAIGN_STRICT=1, 1 unless every goal is MET. */
export function strictExitCode(goals: Goal[], strict: boolean): number {
  return strict && goals.some((g) => g.status !== 'MET') ? 1 : 0;
}

/** The profile's line a script reads. */
export function summaryLine(name: string, f: ProfileFigures): string {
  const pct0 = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '—');
  return `campaign ${name}: topo ${f1(f.topo)} GPU-h per right (right ${pct0(f.right)}), manual ${f1(f.manual)}, random ${f1(f.random ?? Number.NaN)}, asha ${f1(f.asha ?? Number.NaN)}, optuna ${f.optuna === undefined ? 'absent' : f1(f.optuna)}, floor ${f1(f.floor)}, oom-runs ${f.oomRuns}, prediction-error ${Number.isFinite(f.predictionError) ? (100 * f.predictionError).toFixed(1) : '—'}% (coverage ${pct0(f.coverage)})`;
}
