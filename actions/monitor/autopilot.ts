// The monitor action's autopilot port (src/monitor/ports.ts AutopilotPort) over the default-branch
// checkout (the policy, the record, suggest) and the GitHub API (src/usecases/autopilot-github.ts). Pull
// requests made with a workflow's GITHUB_TOKEN start no workflow, so the pass that opens a bot pull
// request posts its validate check itself (the same use case and check name as the validate action).
import { parseDocument } from 'yaml';
import { dashboardMarker, dashboardTitle } from '../../src/autopilot/dashboard.js';
import { policyOf } from '../../src/autopilot/policy.js';
import { botPullTitle } from '../../src/autopilot/pulls.js';
import { roundHypothesis } from '../../src/autopilot/runs.js';
import { applyCommands, type CommandReply, type PilotState } from '../../src/autopilot/state.js';
import { postSummaryCheckRun } from '../../src/github/check-runs.js';
import type { Octokit } from '../../src/github/client.js';
import { githubFileSource } from '../../src/github/contents.js';
import { updateRunState } from '../../src/github/run-state.js';
import { writeSubmitComment } from '../../src/github/submissions.js';
import { admitRequest } from '../../src/lifecycle/bounds.js';
import { type RunRequest, standingRequests } from '../../src/lifecycle/model.js';
import { newRunLabel, runNameFor } from '../../src/lifecycle/run-name.js';
import type { AutopilotPort } from '../../src/monitor/ports.js';
import { readAutopilot } from '../../src/usecases/autopilot.js';
import {
  type AutopilotRepo,
  changedFiles,
  closeWithComment,
  type Dashboard,
  dashboardControls,
  findDashboard,
  listBotPulls,
  openBotPull,
  type PermissionCache,
  readPilotState,
  updatePilotState,
  writeDashboard,
} from '../../src/usecases/autopilot-github.js';
import { prepareCandidateAt } from '../../src/usecases/prepare.js';
import { type RecordDeps, recordClosedPullRequest } from '../../src/usecases/record.js';
import { pullBody, runSuggest } from '../../src/usecases/suggest.js';
import { fileSystemSource, validatePullRequest } from '../../src/usecases/validate.js';

export const VALIDATE_CHECK_NAME = 'topo/validate';

export interface AutopilotConfig {
  workspace: string;
  clustersFile: string;
  topologiesDir: string;
  presetsDir?: string;
  log: (line: string) => void;
  /** Records a pull request the bot closed (closedPullRecorder): its GITHUB_TOKEN starts no record workflow. */
  record?: (pr: number) => Promise<void>;
}

export function autopilotPort(
  octokit: Octokit,
  target: AutopilotRepo,
  config: AutopilotConfig,
): AutopilotPort {
  const repo = { owner: target.owner, repo: target.repo };
  const files = fileSystemSource(config.workspace);
  const dashboards = new Map<string, Dashboard | null>();
  // one permission check per commenter per port, i.e. per pass
  const permissions: PermissionCache = new Map();
  return {
    async read(exp) {
      const id = exp.experiment.experiment_id;
      if (!policyOf(exp.experiment)) return null;
      const context = await readAutopilot(files, id, config.clustersFile);
      const pulls = await listBotPulls(octokit, target, id);
      const dashboard = await findDashboard(octokit, target, dashboardMarker(id));
      dashboards.set(id, dashboard);
      const state = await answerCommands(octokit, target, id, dashboard, permissions);
      return { context, pulls, state };
    },
    save: (exp, change) => updatePilotState(octokit, target, exp.experiment.experiment_id, change),
    async propose(exp, count, exclude) {
      const id = exp.experiment.experiment_id;
      const outcome = await runSuggest({
        experimentId: id,
        files,
        count: count + exclude.length,
        clustersFile: config.clustersFile,
      });
      if (outcome.proposals.length === 0)
        config.log(`autopilot ${id}: suggest proposes nothing: ${outcome.result.stop.reason}`);
      return outcome.proposals
        .filter((p) => !exclude.includes(p.candidate.name))
        .slice(0, count)
        .map((p) => ({
          candidate: p.candidate.name,
          path: p.path,
          text: p.text,
          reasoning: pullBody(p, outcome.result),
        }));
    },
    async open(exp, p) {
      const id = exp.experiment.experiment_id;
      const doc = parseDocument(p.text);
      doc.set('hypothesis', roundHypothesis(p.round, String(doc.get('hypothesis') ?? '')));
      const opened = await openBotPull(octokit, target, {
        experimentId: id,
        candidate: p.candidate,
        path: p.path,
        text: doc.toString({ lineWidth: 0 }),
        title: botPullTitle(id, p.candidate, p.round),
        body: p.body,
      });
      if (opened) await validateCheck(octokit, target, config, opened.pr);
      config.log(
        `autopilot ${id}: ${p.candidate} ${opened ? `#${opened.pr}${opened.created ? ' opened' : ''}` : 'closed before: not reopened'}`,
      );
      return opened;
    },
    async request(exp, pull) {
      const id = exp.experiment.experiment_id;
      const path = `${config.topologiesDir}/${id}/${pull.candidate}.yaml`;
      const changed = await changedFiles(octokit, target, pull.pr);
      if (changed.length !== 1 || changed[0] !== path) {
        config.log(
          `autopilot ${id}: #${pull.pr} changes ${changed.join(', ')}, not only ${path}: no Request`,
        );
        return;
      }
      const prepared = await prepareCandidateAt(octokit, repo, pull.headSha, path, { ...config });
      if (!prepared.ok) {
        config.log(`autopilot ${id}: #${pull.pr} does not pass on the default branch: ${prepared.message}`);
        return;
      }
      const c = prepared.candidate;
      const label = newRunLabel();
      const request: RunRequest = {
        id: label,
        experiment: id,
        candidate: pull.candidate,
        path,
        pr: pull.pr,
        headSha: pull.headSha,
        topologyHash: c.topologyHash,
        runName: runNameFor(c.submission.jobName, label),
        login: target.botLogin,
        requestedAt: new Date().toISOString(),
      };
      // Exactly once: a standing Request of this candidate at this head (another pass's) is kept.
      const pullTarget = { ...repo, issue_number: pull.pr, botLogin: target.botLogin };
      const written = await updateRunState(octokit, pullTarget, (s) =>
        standingRequests(s, pull.headSha).some((r) => r.candidate === pull.candidate)
          ? s
          : admitRequest(s, request),
      );
      // the bot's own record of it, which `/topo cancel` and `/topo state rebuild` read besides the state
      if (written.requests.some((r) => r.id === request.id))
        await writeSubmitComment(
          octokit,
          pullTarget,
          pull.candidate,
          `### Submission of \`${pull.candidate}\`\n\n\`${request.runName}\` requested by the autopilot (the policy on the default branch); the monitor submits it when a slot frees.`,
          { request },
        );
    },
    async close(_exp, pr, comment) {
      await closeWithComment(octokit, target, pr, comment);
      await config.record?.(pr);
    },
    async dashboard(exp, body, concluded) {
      const id = exp.experiment.experiment_id;
      const text = concluded ? `${body}\n\n**Concluded:** ${concluded}` : body;
      const found = dashboards.get(id);
      await writeDashboard(octokit, target, {
        marker: dashboardMarker(id),
        title: dashboardTitle(id),
        body: text,
        close: !!concluded,
        ...(found !== undefined ? { found } : {}),
      });
    },
  };
}

/**
 * Records a pull request the bot just closed, as the record workflow would (a close made with the
 * workflow's GITHUB_TOKEN starts none): its Requests end, its run enters the record, and its
 * allocation counts there too. A failure says how to record it by hand.
 */
export function closedPullRecorder(
  octokit: Octokit,
  target: AutopilotRepo,
  deps: Pick<RecordDeps, 'topologiesDir' | 'clusterOf' | 'slurmFor' | 'observe' | 'log'>,
): (pr: number) => Promise<void> {
  const repo = { owner: target.owner, repo: target.repo };
  return async (pr) => {
    const pull = (await octokit.rest.pulls.get({ ...repo, pull_number: pr })).data;
    const defaultBranch = pull.base.repo.default_branch;
    try {
      const result = await recordClosedPullRequest(
        { ...deps, octokit, ...repo, botLogin: target.botLogin, defaultBranch },
        pull,
      );
      deps.log?.(
        `autopilot: #${pr} recorded (${result.recorded.map((r) => `${r.candidate}: ${r.kind}`).join(', ') || result.skipped || 'nothing to record'})`,
      );
    } catch (error) {
      throw new Error(
        `#${pr} was closed but not recorded (${(error as Error).message}): run the record workflow by hand with pull request ${pr}`,
      );
    }
  };
}

/**
 * The bot's state with the dashboard's new /topo comments applied: written first (compare-and-swap,
 * so a comment is applied once), then each answered on the dashboard.
 */
async function answerCommands(
  octokit: Octokit,
  target: AutopilotRepo,
  id: string,
  dashboard: Dashboard | null,
  permissions: PermissionCache,
): Promise<PilotState> {
  const { state } = await readPilotState(octokit, target, id);
  if (!dashboard) return state;
  const comments = await dashboardControls(octokit, target, dashboard.number, state.lastComment, permissions);
  if (comments.length === 0) return state;
  let replies: CommandReply[] = [];
  const written = await updatePilotState(octokit, target, id, (s) => {
    const applied = applyCommands(s, comments);
    replies = applied.replies;
    return applied.state;
  });
  for (const r of replies)
    await octokit.rest.issues.createComment({
      owner: target.owner,
      repo: target.repo,
      issue_number: dashboard.number,
      body: r.text,
    });
  return written;
}

/** The validate check on a bot pull request's head, from the pass that opened it (GITHUB_TOKEN starts no workflow). */
async function validateCheck(octokit: Octokit, target: AutopilotRepo, config: AutopilotConfig, pr: number) {
  const repo = { owner: target.owner, repo: target.repo };
  const head = (await octokit.rest.pulls.get({ ...repo, pull_number: pr })).data.head.sha;
  let summary = '';
  const report = await validatePullRequest(
    { changedPaths: await changedFiles(octokit, target, pr), topologiesDir: config.topologiesDir },
    {
      files: githubFileSource(octokit, { ...repo, ref: head }),
      config: fileSystemSource(config.workspace),
      clustersFile: config.clustersFile,
      presets: config.presetsDir ? { overrideDir: config.presetsDir } : {},
    },
    {
      annotate: () => {},
      summary: async (m) => {
        summary += m;
      },
      info: config.log,
    },
  );
  await postSummaryCheckRun(octokit, {
    ...repo,
    name: VALIDATE_CHECK_NAME,
    head_sha: head,
    conclusion: report.errorCount > 0 ? 'failure' : 'success',
    title: `${report.errorCount} error(s), ${report.warningCount} warning(s) in ${report.files.length} file(s)`,
    summary: summary || 'No topology files changed.',
  });
}
