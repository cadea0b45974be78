// The candidate's state as exactly one `topology:<state>` label on its pull request.
import type { Octokit } from './client.js';

export const STATE_LABELS = {
  queued: { name: 'topology:queued', color: 'c5def5', description: 'Waiting for a free experiment slot' },
  running: {
    name: 'topology:running',
    color: 'fbca04',
    description: 'Running on Slurm, metrics not stable yet',
  },
  stable: { name: 'topology:stable', color: '0e8a16', description: 'Metrics stabilised: verdict available' },
  failed: {
    name: 'topology:failed',
    color: 'd93f0b',
    description: 'The run failed: see the comment for why',
  },
} as const;
export type LabelState = keyof typeof STATE_LABELS;

const PREFIX = 'topology:';

export interface IssueTarget {
  owner: string;
  repo: string;
  issue_number: number;
}

/** Pure: which labels to remove and add so that exactly `state` (or none) remains. */
export function planStateLabels(
  current: string[],
  state: LabelState | null,
): { remove: string[]; add: string[] } {
  const wanted = state ? STATE_LABELS[state].name : undefined;
  // Every topology:* label but the wanted one goes: labels only display the bot's state.
  const remove = current.filter((l) => l.startsWith(PREFIX) && l !== wanted);
  const add = wanted && !current.includes(wanted) ? [wanted] : [];
  return { remove, add };
}

/** Sets the state label; returns true when something changed. `current` saves a read when known. */
export async function setStateLabel(
  octokit: Octokit,
  target: IssueTarget,
  state: LabelState | null,
  current?: string[],
): Promise<boolean> {
  const names =
    current ??
    (await octokit.paginate(octokit.rest.issues.listLabelsOnIssue, { ...target, per_page: 100 })).map(
      (l) => l.name,
    );
  const plan = planStateLabels(names, state);
  for (const name of plan.remove) {
    try {
      await octokit.rest.issues.removeLabel({ ...target, name });
    } catch (e) {
      // Already removed by a concurrent pass: the goal is reached.
      if ((e as { status?: number }).status !== 404) throw e;
    }
  }
  if (plan.add.length) await octokit.rest.issues.addLabels({ ...target, labels: plan.add });
  return plan.remove.length > 0 || plan.add.length > 0;
}

/** Creates the four state labels in the repository with colours and descriptions, if missing. */
export async function ensureStateLabels(
  octokit: Octokit,
  repo: { owner: string; repo: string },
): Promise<void> {
  for (const label of Object.values(STATE_LABELS)) {
    try {
      await octokit.rest.issues.createLabel({ ...repo, ...label });
    } catch (e) {
      if ((e as { status?: number }).status !== 422) throw e; // 422: already exists
    }
  }
}
