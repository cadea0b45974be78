// On pull_request closed, after its candidates: each reference job its rounds ran (the bot's
// reference Requests in its state, src/lifecycle/reference.ts) is recorded as a reference run of the
// experiment (src/record/reference-runs.ts), charged with the GPU-minutes its Slurm allocation held,
// by compare-and-swap like a candidate. Never as the best's own run: the record keeps that one.
import { type CasCommitResult, commitWithCompareAndSwap } from '../github/commits.js';
import { jobForRun } from '../lifecycle/jobs.js';
import { isReferenceRequest, type RunRequest } from '../lifecycle/model.js';
import { recordFiles } from '../record/files.js';
import { createRecord, recordPaths } from '../record/model.js';
import { applyReferenceRun, type ReferenceRun, referenceRunEntry } from '../record/reference-runs.js';
import { parseRecord } from '../record/validate.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { Closed } from './close.js';

/** What recording a reference job reads besides the record's own dependencies. */
export interface ReferenceRecording {
  pull: { number: number; closed_at?: string | null };
  closed: Closed;
  /** The experiment a Request names (the default branch's), or undefined when it is gone. */
  experimentOf(id: string): Promise<Experiment | undefined>;
  /** The reference job's monitor comment observation (`monitor-<best>`), when the pull request has one. */
  observationOf(candidate: string): Promise<CandidateObservation | undefined>;
  /** The cluster's time scale (1 for AlpaSim; the twin's compression factor). */
  timeScaleOf(experiment: Experiment): number;
}

export interface RecordedReference {
  experimentId: string;
  runName: string;
  gpuMinutes: number | null;
  commit: CasCommitResult;
}

/** The record's entry for one reference Request of the closed pull request. */
async function referenceRunOf(
  r: ReferenceRecording,
  request: RunRequest,
  experiment: Experiment,
): Promise<ReferenceRun> {
  const { closed } = r;
  const job = jobForRun(closed.jobs.get(request.experiment) ?? [], request.runName, (j) => j) ?? undefined;
  const seen = await r.observationOf(request.candidate);
  const observation = seen?.run_name === request.runName ? seen : undefined;
  const candidates = closed.state.requests
    .filter((q) => !isReferenceRequest(q) && q.experiment === request.experiment)
    .map((q) => q.candidate);
  return referenceRunEntry({
    of: request.candidate,
    runName: request.runName,
    jobId: job?.id ?? closed.state.runs[request.id]?.jobId ?? null,
    pullRequest: r.pull.number,
    observation,
    heldGpuMinutes: job?.gpuMinutes == null ? null : job.gpuMinutes * r.timeScaleOf(experiment),
    ended: closed.state.outcomes[request.id]?.kind ?? null,
    candidates,
    at: r.pull.closed_at ?? null,
  });
}

/**
 * Records every reference job of the closed pull request (those that were submitted); each is one
 * compare-and-swap commit of the experiment's record, keyed by the run's name (a re-run changes nothing).
 */
export async function recordReferenceRuns(
  deps: {
    octokit: Parameters<typeof commitWithCompareAndSwap>[0];
    owner: string;
    repo: string;
    defaultBranch: string;
    maxAttempts?: number;
    backoffMs?: (attempt: number) => number;
    log?: (line: string) => void;
  },
  r: ReferenceRecording,
): Promise<RecordedReference[]> {
  const out: RecordedReference[] = [];
  for (const request of r.closed.state.requests.filter(isReferenceRequest)) {
    if (!r.closed.state.runs[request.id]) continue; // never submitted: nothing ran, nothing to charge
    const experiment = await r.experimentOf(request.experiment);
    if (!experiment) continue;
    const run = await referenceRunOf(r, request, experiment);
    const paths = recordPaths(request.experiment);
    const commit = await commitWithCompareAndSwap(deps.octokit, {
      owner: deps.owner,
      repo: deps.repo,
      branch: deps.defaultBranch,
      paths: [paths.json, paths.markdown, paths.chart],
      message: `record: reference job ${run.run_name} (${run.gpu_minutes ?? '?'} GPU-minutes) in ${request.experiment} (#${r.pull.number})`,
      ...(deps.maxAttempts ? { maxAttempts: deps.maxAttempts } : {}),
      ...(deps.backoffMs ? { backoffMs: deps.backoffMs } : {}),
      update: (current) => {
        const text = current.get(paths.json);
        const record = text == null ? createRecord(experiment) : parseRecord(text, paths.json);
        return recordFiles(applyReferenceRun(record, run));
      },
    });
    deps.log?.(`recorded reference job ${run.run_name}: ${run.gpu_minutes ?? 'unknown'} GPU-minutes`);
    out.push({
      experimentId: request.experiment,
      runName: run.run_name,
      gpuMinutes: run.gpu_minutes ?? null,
      commit,
    });
  }
  return out;
}
