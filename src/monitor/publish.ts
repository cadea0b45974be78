// Stage `publish`: what people see, written only where it changed. Per pull request, when any of
// its candidates' comments is due: its check run on each head commit with a due candidate and its
// state label, both over ALL its candidates (never one candidate's alone); then each due comment
// (written last: it is the pass's commit marker); then each run's Outcome once its comment is
// final (judged as of the job's end, written once). An experiment whose cluster was unreachable
// gets a notice on its requested candidates' last comments, and its pull requests keep their check
// and label.
import { savingsText } from '../analysis/decision.js';
import { referenceText } from '../analysis/reference.js';
import { REFERENCE_STOP } from '../judge/reference.js';
import type { Outcome } from '../lifecycle/model.js';
import { pullRequestCheckRun } from '../report/check-conclusion.js';
import { type CandidateView, monitorCheck } from '../report/pr-comment.js';
import { endedCandidate, pullStateLabel } from '../report/state-label.js';
import { type CommentPlan, planComment, unavailableSince, withUnavailableNotice } from './comment.js';
import { iso } from './judge.js';
import type { MonitorCandidate, MonitorCheck, MonitorJob, MonitorPorts } from './ports.js';
import {
  type CandidatePass,
  type ExperimentPass,
  heldPulls,
  judged,
  type PassState,
  type PublishResult,
  storePublished,
} from './state.js';

export async function publish(state: PassState, ports: MonitorPorts): Promise<void> {
  storePublished(state, await publishPass(state, ports));
}

/** Publish for the pass: the notices, then each pull request; what it wrote and the errors it met. */
export async function publishPass(state: PassState, ports: MonitorPorts): Promise<PublishResult> {
  const errors = new Map<ExperimentPass, string[]>();
  for (const e of state.experiments) {
    const noted = await noteOutages(ports, e);
    if (noted.length) errors.set(e, noted);
  }
  const held = heldPulls(state);
  const candidates = new Map<CandidatePass, { changed: boolean; view?: CandidateView }>();
  const pullErrors: string[] = [];
  for (const [pr, plans] of pullPlans(state, ports)) {
    let changed = (x: Planned) => x.plan.text !== undefined;
    try {
      await writePull(ports, pr, plans, {
        held: held.has(pr),
        left: state.left.get(pr),
        remembered: rememberedOf(state, pr),
      });
    } catch (error) {
      pullErrors.push(`#${pr}: ${(error as Error).message}`);
      changed = () => false;
    }
    for (const x of plans) candidates.set(x.p, { changed: changed(x), view: x.plan.view });
  }
  return { candidates, pullErrors, errors };
}

/** The notice on an experiment's comments when its cluster, or its accounting, was unreachable; the errors of writing it. */
function noteOutages(ports: MonitorPorts, e: ExperimentPass): Promise<string[]> {
  if (e.failed?.clusterUnreachable) return noteUnreachable(ports, e.exp.candidates, e.failed.message);
  if (!e.accountingUnreachable || e.failed) return Promise.resolve([]);
  // a run whose job only accounting would know: unknown this pass, its comment says why
  const unknown = e.candidates.filter((p) => p.phase?.phase === 'lost').map((p) => p.c);
  return noteUnreachable(ports, unknown, `sacct: ${e.accountingUnreachable}`, 'Accounting unreachable');
}

/** A judged candidate, its job and its comment plan. */
interface Planned {
  p: CandidatePass;
  job: MonitorJob | undefined;
  plan: CommentPlan;
  /** A policy recorded its Outcome this pass (the autopilot's stop): none is recorded again. */
  recorded: boolean;
}

/** The judged candidates' comment plans grouped by pull request (in the pass's order), and pull requests a candidate left. */
function pullPlans(state: PassState, ports: MonitorPorts): Map<number, Planned[]> {
  const byPull = new Map<number, Planned[]>();
  for (const e of state.experiments) {
    if (e.failed) continue;
    for (const { p, view, job } of judged(e)) {
      const plan = planComment(view, {
        job,
        ended: p.observed?.ended ?? false,
        current: p.observed?.current,
        evalTs: e.clock.evalTs,
        scrape: e.clock.scrape,
        unavailable: e.unavailable,
        ...(e.clock.skew ? { heldBy: 'Runner clock off' as const } : {}),
        refresh: state.options.refresh === true,
        now: ports.now(),
      });
      const recorded = !!e.plan?.recorded.has(p);
      byPull.set(p.c.pr, [...(byPull.get(p.c.pr) ?? []), { p, job, plan, recorded }]);
    }
  }
  for (const pr of state.left.keys()) if (!byPull.has(pr)) byPull.set(pr, []);
  return byPull;
}

/** A candidate whose run ended and that Slurm forgot, as its final comment says (src/report/state-label.ts). */
type Remembered = NonNullable<ReturnType<typeof endedCandidate>> & { sha: string; candidate: string };

/** The pull request's candidates whose runs ended and that Slurm forgot, read from their final comments. */
function rememberedOf(state: PassState, pr: number): Remembered[] {
  return state.experiments
    .filter((e) => !e.failed)
    .flatMap((e) => e.candidates.filter((p) => p.remembered && p.c.pr === pr))
    .flatMap((p) => {
      const ended = endedCandidate(p.c.candidate, p.observed?.current);
      return ended ? [{ sha: p.c.headSha, candidate: p.c.candidate, ...ended }] : [];
    });
}

async function writePull(
  ports: MonitorPorts,
  pr: number,
  plans: readonly Planned[],
  pull: { held: boolean; left?: string[]; remembered: readonly Remembered[] },
): Promise<void> {
  const hold = pull.held || plans.some((x) => x.plan.held);
  const due = plans.filter((x) => x.plan.text !== undefined);
  const views = plans.map((x) => x.plan.view);
  if (!hold) {
    for (const sha of new Set(due.filter((x) => x.plan.checkDue).map((x) => x.p.c.headSha)))
      await ports.github.writeCheck(
        pr,
        sha,
        pullCheck(
          plans.filter((x) => x.p.c.headSha === sha).map((x) => x.plan.view),
          pull.remembered.filter((r) => r.sha === sha),
        ),
      );
    if (due.length || pull.left)
      await ports.github.setLabel(
        pr,
        pullStateLabel([...views, ...pull.remembered]),
        plans[0]?.p.c.labels ?? pull.left ?? [],
      );
  }
  for (const x of due) await ports.github.writeComment(pr, x.p.c.candidate, x.plan.text as string);
  for (const { p, job, plan, recorded } of plans)
    if (plan.final && job && p.c.request && !p.c.outcome && !recorded)
      await ports.lifecycle?.recordOutcome(
        pr,
        p.c.request.id,
        finalOutcome(plan.view, job, iso(job.endTs) ?? new Date(ports.now() * 1000).toISOString()),
      );
}

/**
 * The check run of a pull request's head commit over its candidates at that commit: those judged,
 * and those whose runs ended and Slurm forgot (as their final comments say).
 */
export function pullCheck(
  views: readonly CandidateView[],
  remembered: ReadonlyArray<{ candidate: string; check: MonitorCheck }> = [],
): MonitorCheck {
  return pullRequestCheckRun([
    ...views.map((v) => ({ candidate: v.candidate, check: monitorCheck(v) })),
    ...remembered.map((r) => ({ candidate: r.candidate, check: r.check })),
  ]);
}

/** Says so on top of each requested candidate's last judged comment; the next pass retries. The errors of writing it. */
async function noteUnreachable(
  ports: MonitorPorts,
  candidates: readonly MonitorCandidate[],
  reason: string,
  what: 'Cluster unreachable' | 'Accounting unreachable' = 'Cluster unreachable',
): Promise<string[]> {
  const errors: string[] = [];
  for (const c of candidates) {
    if (!c.request || c.outcome) continue;
    try {
      const current = await ports.github.readComment(c.pr, c.candidate);
      const since = unavailableSince(current) ?? iso(ports.now()) ?? '';
      const noted = withUnavailableNotice(current, since, reason, what);
      if (noted !== undefined && noted !== current) await ports.github.writeComment(c.pr, c.candidate, noted);
    } catch (error) {
      errors.push(`#${c.pr}: ${(error as Error).message}`);
    }
  }
  return errors;
}

/** The Outcome of a run whose comment just became final (judged as of the job's end). */
export function finalOutcome(view: CandidateView, job: MonitorJob, at: string): Outcome {
  const v = view.observation.verdict;
  const d = view.observation.decision;
  if (view.state === 'stopped' && view.stoppedBy === 'decision' && d)
    return {
      kind: 'decided',
      at,
      jobId: job.jobId,
      evidence: [
        `${d.state} against ${referenceText(d.reference)}${d.decided_at_minutes != null ? ` at run-minute ${d.decided_at_minutes}` : ''}: Slurm job ${job.jobId} cancelled by the decision (stop_when_decided)`,
        ...d.evidence,
        ...(savingsText(d) ? [savingsText(d) as string] : []),
      ],
    };
  if (view.state === 'stopped' && view.stoppedBy === 'no-longer-needed')
    return {
      kind: 'decided',
      at,
      jobId: job.jobId,
      evidence: [
        `reference job: Slurm job ${job.jobId} cancelled once no open decision needed it`,
        ...(d?.evidence.filter((e) => e.startsWith(REFERENCE_STOP)) ?? []),
      ],
    };
  const kind: Outcome['kind'] =
    view.state === 'failed' ? 'failed' : view.state === 'stopped' ? 'stopped' : 'finished';
  const evidence =
    kind === 'failed'
      ? [view.observation.failure?.message ?? `Slurm job ${job.jobId} ended ${job.state}`]
      : [
          v.value
            ? `${v.state}: ${v.value.value} s/rollout [${v.value.low}, ${v.value.high}]`
            : `ended without a stable value (${v.state})`,
        ];
  return { kind, at, jobId: job.jobId, evidence };
}
