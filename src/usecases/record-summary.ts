// What the record action reports for one record pass: its step outputs (JSON lists), its job
// summary's lines and the warnings it logs. Pure: actions/record/main.ts writes them.
import type { RecordResult } from './record.js';

/** The step outputs, by name, in the order the action sets them. */
export function recordOutputs(result: RecordResult): Record<string, string> {
  const recorded = recordedRows(result);
  return {
    recorded: JSON.stringify(recorded),
    'not-recorded': JSON.stringify(
      result.notRecorded.map((n) => ({
        experiment_id: n.experimentId,
        candidate: n.candidate,
        file: n.file,
        refused: n.refused,
        why: n.why,
      })),
    ),
    'reference-runs': JSON.stringify(referenceRows(result)),
    'closed-requests': JSON.stringify(result.closed.requests),
    'cancelled-jobs': JSON.stringify(result.closed.cancelledJobs),
    committed: String(recorded.some((r) => r.committed)),
    'commit-sha': recorded.at(-1)?.commit_sha ?? '',
  };
}

/** The job summary's lines (under its heading "Experiment record") and the warnings of the pass. */
export function recordSummary(result: RecordResult): { lines: string[]; warnings: string[] } {
  const lines: string[] = [];
  const warnings: string[] = [];
  if (result.skipped) lines.push(`Nothing recorded: ${result.skipped}.`);
  for (const r of recordedRows(result)) {
    lines.push(
      `- \`${r.candidate}\` recorded as **${r.kind}** in \`experiments/${r.experiment_id}.json\` (${r.committed ? `commit ${r.commit_sha.slice(0, 7)}` : 'already up to date'})${r.telemetry_gaps.length ? `; gaps: ${r.telemetry_gaps.join('; ')}` : ''}`,
    );
    for (const gap of r.telemetry_gaps) warnings.push(`${r.candidate}: ${gap}`);
  }
  for (const n of result.notRecorded) {
    lines.push(`- \`${n.candidate}\` (\`${n.file}\`) not recorded: ${n.why}`);
    // a refusal is the record working (the pull request is told why); it is not a failed step
    if (n.refused) warnings.push(`${n.candidate}: refused: ${n.why}`);
  }
  for (const r of referenceRows(result))
    lines.push(
      `- reference job \`${r.run_name}\` recorded in \`experiments/${r.experiment_id}.json\`: ${r.gpu_minutes ?? 'unknown'} GPU-minutes, charged to the experiment`,
    );
  if (result.closed.requests.length)
    lines.push(
      `The pull request's ${result.closed.requests.length} open run request(s) ended with it (Outcome \`closed\`)${result.closed.cancelledJobs.length ? `; Slurm job(s) ${result.closed.cancelledJobs.join(', ')} cancelled` : ''}. Reopening it needs a new \`/topo submit\`.`,
    );
  return { lines, warnings };
}

/** The `recorded` output's rows. */
function recordedRows(result: RecordResult) {
  return result.recorded.map((r) => ({
    experiment_id: r.experimentId,
    candidate: r.candidate,
    kind: r.kind,
    run_name: r.runName,
    committed: r.commit.committed,
    commit_sha: r.commit.sha,
    cancelled_jobs: r.cancelledJobs,
    telemetry_gaps: r.telemetryGaps,
  }));
}

/** The `reference-runs` output's rows. */
function referenceRows(result: RecordResult) {
  return (result.references ?? []).map((r) => ({
    experiment_id: r.experimentId,
    run_name: r.runName,
    gpu_minutes: r.gpuMinutes,
    committed: r.commit.committed,
  }));
}
