// The pull request's reply to a submit: job id, cluster, the exact command (shell-quoted for reading),
// the place in the queue when there is no free slot. Pure: SubmitResult in, Markdown out.
import type { CancelResult, SubmitResult } from './submit.js';

/** A fenced block that no backtick run inside `text` can close early. */
function codeBlock(text: string, lang = 'sh'): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

function code(text: string): string {
  return `\`${text.replace(/`/g, "'")}\``;
}

function ordinal(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

export function renderSubmitComment(result: SubmitResult): string {
  const lines: string[] = [];
  switch (result.status) {
    case 'submitted':
      lines.push(`### Submitted: job ${code(result.jobId)} on cluster ${code(result.cluster)}`);
      break;
    case 'existing':
      lines.push(
        `### Already submitted: job ${code(result.jobId)} on cluster ${code(result.cluster)} (${result.state.toLowerCase()})`,
        '',
        'A job with this name (same experiment, candidate and topology) exists, so nothing new was submitted.',
      );
      break;
    case 'queued':
      lines.push(
        `### Queued: ${ordinal(result.position)} in line on cluster ${code(result.cluster)}`,
        '',
        `${result.live} of ${result.maxParallel} candidates of this experiment are running or pending (max_parallel ${result.maxParallel}). This candidate is submitted when a slot frees, first come, first served.`,
      );
      break;
    case 'dry-run':
      lines.push(
        `### Dry run: would be ${result.wouldBe === 'queued' ? `queued (${ordinal(result.position ?? 1)} in line)` : 'submitted'} on cluster ${code(result.cluster)}`,
      );
      break;
  }
  lines.push('', `Job name: ${code(result.jobName)}`, '', 'Command:', '', codeBlock(result.command));
  return `${lines.join('\n')}\n`;
}

export function renderCancelComment(result: CancelResult, cluster: string): string {
  if (result.cancelled.length > 0) {
    const ids = result.cancelled.map(code).join(', ');
    return `### Cancelled job ${ids} on cluster ${code(cluster)}\n\nJob name: ${code(result.jobName)}\n`;
  }
  const state = result.job
    ? `its job ${code(result.job.id)} is ${result.job.state.toLowerCase()}`
    : 'Slurm knows no job of this name';
  return `### Nothing to cancel on cluster ${code(cluster)}\n\nNo pending or running job is named ${code(result.jobName)}: ${state}.\n`;
}
