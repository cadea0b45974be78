// Acknowledging a /topo command on the comment itself: eyes on receipt, rocket on success,
// confused on refusal or failure.
import type { Octokit } from './client.js';

export const REACTION = { received: 'eyes', succeeded: 'rocket', refused: 'confused' } as const;
export type ReactionKind = keyof typeof REACTION;

export async function reactToComment(
  octokit: Octokit,
  target: { owner: string; repo: string; comment_id: number },
  kind: ReactionKind,
): Promise<void> {
  // Adding the same reaction twice answers 200 with the existing one: safe on re-runs.
  await octokit.rest.reactions.createForIssueComment({ ...target, content: REACTION[kind] });
}
