// The issue's goals, judged per profile: each MET, MISSED (by how much) or UNKNOWN (a figure is
// absent, e.g. Optuna not installed): never a silent pass. CAMPAIGN_STRICT=1 makes the bench exit
// non-zero unless every goal is MET.

export type GoalStatus = 'MET' | 'MISSED' | 'UNKNOWN';

export interface Goal {
  status: GoalStatus;
  text: string;
}

/** Per-profile medians (GPU-hours to within 2%) and shares the goals read; absent methods are undefined. */
export interface ProfileFigures {
  topo: number;
  manual: number;
  random?: number;
  asha?: number;
  /** Undefined when Optuna is not installed. */
  optuna?: number;
  /** Share of campaigns whose concluded answer is within 2%. */
  right: number;
  /** OOM runs started after the baseline, over all seeds. */
  oomRuns: number;
  /** Median |error| and interval coverage of the predictions after the baseline alone. */
  predictionError: number;
  coverage: number;
  /** The information floor (median GPU-hours any method must spend). */
  floor: number;
}

const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const pc = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');

function goal(ok: boolean | null, text: string, miss: string): Goal {
  if (ok === null) return { status: 'UNKNOWN', text };
  return ok ? { status: 'MET', text } : { status: 'MISSED', text: `${text}; missed by ${miss}` };
}

/** The five goals of issue 27 for one profile. */
export function judgeGoals(f: ProfileFigures): Goal[] {
  const target = 0.25 * f.manual;
  const others: Array<[string, number | undefined]> = [
    ['random', f.random],
    ['ASHA', f.asha],
    ['Optuna', f.optuna],
  ];
  const absent = others.filter(([, v]) => v === undefined || !Number.isFinite(v)).map(([n]) => n);
  const bestOther = Math.min(...others.map(([, v]) => v ?? Number.POSITIVE_INFINITY));
  const known = [f.topo, f.manual].every(Number.isFinite);
  return [
    goal(
      known ? f.topo <= target : null,
      `GPU-hours to within 2%: topo ${f1(f.topo)} ≤ 25% of the seed's rule by hand (${f1(target)} of ${f1(f.manual)}); topo is ${pc(f.topo / f.manual)} of it; the information floor ${f1(f.floor)} GPU-h is ${pc(f.floor / f.manual)}${f.floor > target ? ' (the goal is below what any method must spend)' : ''}`,
      `${f1(f.topo - target)} GPU-h (${(f.topo / target).toFixed(2)}× the goal)`,
    ),
    goal(
      absent.length || !Number.isFinite(f.topo) ? null : f.topo < bestOther,
      `GPU-hours below random + decisions, ASHA and Optuna: topo ${f1(f.topo)} against ${others.map(([n, v]) => `${n} ${v === undefined ? 'absent' : f1(v)}`).join(', ')}${absent.length ? ` (not judged: ${absent.join(', ')} absent)` : ''}`,
      `${f1(f.topo - bestOther)} GPU-h`,
    ),
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
export function summaryLine(
  name: string,
  f: Pick<ProfileFigures, 'topo' | 'manual' | 'random' | 'asha' | 'optuna' | 'right' | 'oomRuns'> & {
    predictionError: number;
    coverage: number;
  },
): string {
  const pct0 = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '—');
  return `campaign ${name}: topo ${f1(f.topo)} GPU-h (right ${pct0(f.right)}), manual ${f1(f.manual)}, random ${f1(f.random ?? Number.NaN)}, asha ${f1(f.asha ?? Number.NaN)}, optuna ${f.optuna === undefined ? 'absent' : f1(f.optuna)}, oom-runs ${f.oomRuns}, prediction-error ${Number.isFinite(f.predictionError) ? (100 * f.predictionError).toFixed(1) : '—'}% (coverage ${pct0(f.coverage)})`;
}
