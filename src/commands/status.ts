// `/topo status`: one monitor pass for this pull request, now (the monitor's own ports, limited to
// this pull request, every candidate's comment written whatever comment_interval_minutes says, so the
// reply is true). It never submits: the queue is served by the scheduled pass, by request time.
import type { HandlerResult, PullCommand, StatusOfCandidate } from './command.js';

export const status: PullCommand = {
  name: 'status',
  where: 'pull',
  argument: { kind: 'none' },
  permission: 'write',
  recordedAtClose: false,
  summary: 'refresh the status comment now (otherwise every few minutes)',
  run: async (ctx) => {
    const report = await ctx.ports.refresh(ctx.octokit, ctx.pullNumber);
    if (report.errors.length) throw new Error(report.errors.join('; '));
    return statusReply(report.candidates);
  },
};

/**
 * The reply after the refresh pass: every candidate of the pull request (each has its own monitor
 * comment), or a refusal when none is requested. Run names are generated, never user text.
 */
export function statusReply(outcomes: readonly StatusOfCandidate[]): HandlerResult {
  const [only] = outcomes;
  if (!only)
    return {
      ok: false,
      message:
        'No run of this pull request is requested: comment `/topo submit` (the experiment must be on the default branch).',
    };
  if (outcomes.length === 1)
    return {
      ok: true,
      message: `\`${only.runName}\` is **${only.state}**: the monitor comment is up to date.`,
    };
  return {
    ok: true,
    message: [
      `${outcomes.length} candidates; each one's monitor comment is up to date:`,
      ...[...outcomes]
        .sort((a, b) => a.candidate.localeCompare(b.candidate))
        .map((o) => `- \`${o.candidate}\`: \`${o.runName}\` is **${o.state}**`),
    ].join('\n'),
  };
}
