// The `--json` documents whose content comes from camelCase TypeScript objects (the Slurm adapter's
// jobs, the submit use case's result): mapped here, key by key, to the snake_case every output uses
// (schemas/cli/*.schema.json). One place, so a new field is one line and cannot leak camelCase.
import type { SlurmJob } from '../slurm/types.js';
import type { CancelResult, SubmitResult } from '../usecases/submit.js';

export function jobJson(job: SlurmJob) {
  return {
    id: job.id,
    name: job.name,
    state: job.state,
    ...(job.rawState ? { raw_state: job.rawState } : {}),
    reason: job.reason,
    exit_code: job.exitCode,
    signal: job.signal,
    restarts: job.restarts,
    submit_time: job.submitTime,
    start_time: job.startTime,
    end_time: job.endTime,
    time_limit: job.timeLimit,
    elapsed: job.elapsed,
    nodes: job.nodes,
    stdout_path: job.stdoutPath,
    source: job.source,
  };
}

export function submitJson(result: SubmitResult) {
  const base = { job_name: result.jobName, cluster: result.cluster, command: result.command };
  switch (result.status) {
    case 'submitted':
      return { ...base, status: result.status, job_id: result.jobId };
    case 'existing':
      return { ...base, status: result.status, job_id: result.jobId, state: result.state };
    case 'queued':
      return {
        ...base,
        status: result.status,
        position: result.position,
        live: result.live,
        max_parallel: result.maxParallel,
      };
    case 'dry-run':
      return {
        ...base,
        status: result.status,
        would_be: result.wouldBe,
        ...(result.position !== undefined ? { position: result.position } : {}),
      };
  }
}

export function cancelJson(result: CancelResult) {
  return {
    job_name: result.jobName,
    cancelled: result.cancelled,
    job: result.job ? jobJson(result.job) : null,
  };
}

/**
 * camelCase keys to snake_case, deeply, for plain data objects whose keys are all field names (the
 * twin's steady state and export summary); maps keyed by service or GPU are left as they are.
 */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(),
      snakeKeys(v),
    ]),
  );
}
