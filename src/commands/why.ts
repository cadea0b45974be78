// `/topo why [<candidate>]`: the evidence of each candidate's judgement as the monitor last published
// it (the observation block of the candidate's monitor comment, the bot's own): the verdict, the
// decision against its reference with its interval, the failure if any, and the evidence lines behind
// each. It only reads the bot's comments, so anyone may ask; every line it quotes is escaped.
import { describeReference } from '../analysis/reference.js';
import { readRunState } from '../github/run-state.js';
import { inlineText } from '../github/user-text.js';
import { parseObservationBlock } from '../report/observation-block.js';
import type { CandidateObservation, Interval } from '../types/generated/metrics.js';
import { readMonitorComment } from '../usecases/monitor-comment.js';
import type { CommandContext, HandlerResult, PullCommand } from './command.js';
import { listed, target } from './pull.js';

export const why: PullCommand = {
  name: 'why',
  where: 'pull',
  argument: { kind: 'candidate' },
  permission: 'anyone',
  recordedAtClose: false,
  onClosed: true,
  summary:
    "the evidence of each candidate's judgement (or the named one's): verdict, decision, reference and why",
  run: explain,
};

async function explain(ctx: CommandContext): Promise<HandlerResult> {
  const state = await readRunState(ctx.octokit, target(ctx));
  const candidates = [...new Set([...state.requests, ...state.ended].map((r) => r.candidate))].sort();
  const chosen = ctx.argument ? candidates.filter((c) => c === ctx.argument) : candidates;
  if (chosen.length === 0)
    return {
      ok: false,
      message: ctx.argument
        ? `This pull request has no run of \`${ctx.argument}\`${candidates.length ? `; its candidates are ${listed(candidates)}` : ''}.`
        : 'No candidate of this pull request has run: comment `/topo submit` first.',
    };
  const parts: string[] = [];
  for (const candidate of chosen) {
    const comment = await readMonitorComment(ctx.octokit, target(ctx), candidate);
    parts.push(whyText(candidate, comment ? parseObservationBlock(comment) : undefined));
  }
  return { ok: true, message: parts.join('\n\n') };
}

const pct = (x: number) => `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const interval = (i: Interval, f: (x: number) => string) => `${f(i.value)} [${f(i.low)}, ${f(i.high)}]`;
const bullets = (lines: readonly string[] | undefined) =>
  (lines ?? []).slice(0, 12).map((l) => `- ${inlineText(l, 300)}`);

/** One candidate's judgement as text (pure): what the monitor's last pass decided and on what evidence. */
export function whyText(candidate: string, o: CandidateObservation | undefined): string {
  if (!o)
    return `**\`${candidate}\`**: no judgement yet: the monitor publishes one on its first pass after the run starts.`;
  const d = o.decision;
  const decision = d
    ? [
        `Decision: **${d.state}** against ${describeReference(d.reference)}`,
        d.relative_change ? ` by ${interval(d.relative_change, pct)}` : '',
        d.figure ? `, at ${interval(d.figure, (x) => x.toFixed(2))} s/rollout` : '',
        ` (min improvement ${(d.min_improvement * 100).toFixed(1)}%${d.decided_at_minutes != null ? `, decided at run-minute ${d.decided_at_minutes.toFixed(0)}` : ''}).`,
      ].join('')
    : 'Decision: none yet.';
  const projected = o.verdict.projected_full_run;
  return [
    `**\`${candidate}\`** (\`${o.run_name}\`): verdict **${o.verdict.state}**${projected ? `, projected full run ${interval(projected, (x) => x.toFixed(2))} s/rollout` : ''}.`,
    decision,
    ...(d?.evidence.length ? ['', 'Why the decision:', ...bullets(d.evidence)] : []),
    ...(o.verdict.evidence.length ? ['', 'Why the verdict:', ...bullets(o.verdict.evidence)] : []),
    ...(o.failure
      ? [
          '',
          `Failure: **${o.failure.kind}**: ${inlineText(o.failure.message, 300)}`,
          ...bullets(o.failure.evidence),
        ]
      : []),
  ].join('\n');
}
