// The monitor action's autopilot port (src/monitor/ports.ts AutopilotPort) over the default-branch
// checkout (the policy, the record, suggest) and the GitHub API (src/usecases/autopilot-github.ts). Pull
// requests, merges and closes made with a workflow's GITHUB_TOKEN start no workflow, so the pass that
// opens a bot pull request posts its validate check itself (the same use case and check name as the
// validate action), and the pass that closes or merges one records it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { dashboardMarker, dashboardTitle } from '../../src/autopilot/dashboard.js';
import { policyOf } from '../../src/autopilot/policy.js';
import type { BotPull } from '../../src/autopilot/pulls.js';
import { roundHypothesis } from '../../src/autopilot/runs.js';
import {
  type CommandReply,
  DASHBOARDS_KEPT,
  type DashboardComment,
  type PilotState,
} from '../../src/autopilot/state.js';
import { applyCommands } from '../../src/commands/dashboard.js';
import { recordedAtClose } from '../../src/commands/recorded.js';
import { upsertCheckRun, VALIDATE_CHECK_NAME } from '../../src/github/check-runs.js';
import type { Octokit } from '../../src/github/client.js';
import { githubFileSource } from '../../src/github/contents.js';
import { updateRunState } from '../../src/github/run-state.js';
import { writeSubmitComment } from '../../src/github/submissions.js';
import { inlineText } from '../../src/github/user-text.js';
import { admitRequest } from '../../src/lifecycle/bounds.js';
import { type RunRequest, standingRequests } from '../../src/lifecycle/model.js';
import type {
  AutopilotPort,
  AutopilotView,
  BotProposal,
  MonitorExperiment,
  Proposed,
} from '../../src/monitor/ports.js';
import { expandPreset } from '../../src/topology/expand.js';
import { checkPreset } from '../../src/topology/files.js';
import { toYaml } from '../../src/topology/init.js';
import { readPresetFromCheckout } from '../../src/topology/presets.js';
import { newRunLabel, runNameFor } from '../../src/topology/run-name.js';
import type { Candidate } from '../../src/types/generated/candidate.js';
import { readAutopilot } from '../../src/usecases/autopilot.js';
import {
  type AutopilotRepo,
  approvedBy,
  changedFiles,
  checkConclusions,
  closeWithComment,
  commitBotProposal,
  type Dashboard,
  dashboardControls,
  findDashboard,
  listBotPulls,
  openBotPull,
  othersCandidates,
  type PermissionCache,
  readPilotState,
  updatePilotState,
  writeDashboard,
} from '../../src/usecases/autopilot-github.js';
import { prepareCandidateAt } from '../../src/usecases/prepare.js';
import { type RecordDeps, recordClosedPullRequest } from '../../src/usecases/record.js';
import { postFinalReport } from '../../src/usecases/report.js';
import { pullBody, runSuggest } from '../../src/usecases/suggest.js';
import { fileSystemSource, validatePullRequest } from '../../src/usecases/validate.js';

export { VALIDATE_CHECK_NAME };

export interface AutopilotConfig {
  workspace: string;
  clustersFile: string;
  topologiesDir: string;
  presetsDir?: string;
  log: (line: string) => void;
  /** Records a pull request the bot closed or merged (closedPullRecorder): its GITHUB_TOKEN starts no record workflow. */
  record?: (pr: number) => Promise<void>;
  /** The candidates people's open pull requests change per experiment (the pass's snapshot); else read through the API. */
  others?: (experimentId: string) => Array<{ pr: number; candidate: string }>;
  /** Web URL of the server (GITHUB_SERVER_URL), for the final report's link to the record. */
  serverUrl?: string;
}

/** One port's (one pass's) GitHub target, configuration and what it read of each experiment. */
interface PilotContext {
  readonly octokit: Octokit;
  readonly target: AutopilotRepo;
  readonly config: AutopilotConfig;
  readonly repo: { owner: string; repo: string };
  /** The experiment's dashboard issue as this pass found it (null: none yet). */
  readonly dashboards: Map<string, Dashboard | null>;
  /** The issues the bot's state keeps as the experiment's dashboards, as this pass read them. */
  readonly kept: Map<string, readonly number[]>;
  /** One permission check per commenter (and reviewer) per port, i.e. per pass. */
  readonly permissions: PermissionCache;
}

const idOf = (exp: MonitorExperiment) => exp.experiment.experiment_id;

/** The autopilot's view of an experiment, after answering the commands on its dashboard; null without a policy. */
async function readPilot(ctx: PilotContext, exp: MonitorExperiment): ReturnType<AutopilotPort['read']> {
  if (!policyOf(exp.experiment)) return null;
  const { octokit, target } = ctx;
  const id = idOf(exp);
  const dashboard = await findDashboard(octokit, target, dashboardMarker(id));
  ctx.dashboards.set(id, dashboard);
  const state = await answerCommands(octokit, target, id, dashboard, ctx.permissions);
  ctx.kept.set(id, state.dashboards);
  return readView(octokit, target, ctx.config, exp, state, ctx.permissions);
}

/** Commits a proposal's candidate file (a later round's hypothesis says which round). */
function commitProposal(
  ctx: PilotContext,
  exp: MonitorExperiment,
  p: Parameters<AutopilotPort['commit']>[1],
): ReturnType<AutopilotPort['commit']> {
  const doc = parseDocument(p.text);
  if (p.round > 0) doc.set('hypothesis', roundHypothesis(p.round, String(doc.get('hypothesis') ?? '')));
  return commitBotProposal(ctx.octokit, ctx.target, {
    experimentId: idOf(exp),
    candidate: p.candidate,
    path: p.path,
    text: doc.toString({ lineWidth: 0 }),
    title: p.title,
    body: p.body,
  });
}

async function openPull(
  ctx: PilotContext,
  exp: MonitorExperiment,
  candidate: string,
  sha: string,
): ReturnType<AutopilotPort['open']> {
  const opened = await openBotPull(ctx.octokit, ctx.target, { experimentId: idOf(exp), candidate, sha });
  ctx.config.log(
    `autopilot ${idOf(exp)}: ${candidate} ${opened ? `#${opened.pr}${opened.created ? ' opened' : ''}` : 'closed before: not reopened'}`,
  );
  return opened;
}

async function mergePull(ctx: PilotContext, exp: MonitorExperiment, pr: number, sha: string): Promise<void> {
  await ctx.octokit.rest.pulls.merge({ ...ctx.repo, pull_number: pr, sha, merge_method: 'merge' });
  ctx.config.log(`autopilot ${idOf(exp)}: #${pr} merged`);
  await ctx.config.record?.(pr);
}

/** The final report, on the experiment's dashboard issue. */
async function postReport(ctx: PilotContext, exp: MonitorExperiment): Promise<void> {
  const { octokit, target, config, repo } = ctx;
  const id = idOf(exp);
  const issue = await dashboardNumber(octokit, target, id, ctx.dashboards);
  const defaultBranch = (await octokit.rest.repos.get(repo)).data.default_branch;
  await postFinalReport(
    {
      octokit,
      ...repo,
      defaultBranch,
      botLogin: target.botLogin,
      at: new Date().toISOString(),
      ...(config.serverUrl ? { serverUrl: config.serverUrl } : {}),
    },
    { experimentId: id, issueNumber: issue },
  );
  config.log(`autopilot ${id}: final report posted on #${issue}`);
}

/** Writes the experiment's dashboard issue (made when there is none), kept in the bot's state. */
async function writePilotDashboard(
  ctx: PilotContext,
  exp: MonitorExperiment,
  body: string,
  closed: boolean,
): Promise<void> {
  const { octokit, target } = ctx;
  const id = idOf(exp);
  const found = ctx.dashboards.get(id);
  const number = await writeDashboard(octokit, target, {
    marker: dashboardMarker(id),
    title: dashboardTitle(id),
    body,
    close: closed,
    ...(found !== undefined ? { found } : {}),
  });
  if (!found) ctx.dashboards.set(id, { number, state: closed ? 'closed' : 'open', body });
  if (!ctx.kept.get(id)?.includes(number))
    ctx.kept.set(id, (await keepDashboard(octokit, target, id, number)).dashboards);
}

export function autopilotPort(
  octokit: Octokit,
  target: AutopilotRepo,
  config: AutopilotConfig,
): AutopilotPort {
  const repo = { owner: target.owner, repo: target.repo };
  const files = fileSystemSource(config.workspace);
  const ctx: PilotContext = {
    octokit,
    target,
    config,
    repo,
    dashboards: new Map(),
    kept: new Map(),
    permissions: new Map(),
  };
  return {
    read: (exp) => readPilot(ctx, exp),
    save: (exp, change) => updatePilotState(octokit, target, idOf(exp), change),
    propose: async (exp, count, exclude, round) =>
      round === 0
        ? { proposals: await baselineProposal(exp, config), stop: { stop: false, reason: '' }, outlook: null }
        : proposals(exp, count, exclude, config, files),
    commit: (exp, p) => commitProposal(ctx, exp, p),
    open: (exp, candidate, sha) => openPull(ctx, exp, candidate, sha),
    validate: (_exp, pr) => validateCheck(octokit, target, config, pr),
    request: (exp, pull) => requestRun(octokit, target, config, idOf(exp), pull),
    async close(_exp, pr, comment) {
      await closeWithComment(octokit, target, pr, comment);
      await config.record?.(pr);
    },
    async label(_exp, pr, name) {
      await octokit.rest.issues.addLabels({ ...repo, issue_number: pr, labels: [name] });
    },
    checks: (_exp, sha) => checkConclusions(octokit, target, sha),
    merge: (exp, pr, sha) => mergePull(ctx, exp, pr, sha),
    report: (exp) => postReport(ctx, exp),
    dashboard: (exp, body, closed) => writePilotDashboard(ctx, exp, body, closed),
  };
}

/** The experiment's dashboard issue (made now if there is none yet: the final report goes there). */
async function dashboardNumber(
  octokit: Octokit,
  target: AutopilotRepo,
  id: string,
  dashboards: Map<string, Dashboard | null>,
): Promise<number> {
  const known = dashboards.get(id);
  if (known) return known.number;
  const body = `${dashboardMarker(id)}\n# ${dashboardTitle(id)}`;
  const number = await writeDashboard(octokit, target, {
    marker: dashboardMarker(id),
    title: dashboardTitle(id),
    body,
    close: false,
  });
  dashboards.set(id, { number, state: 'open', body });
  return number;
}

/**
 * What the autopilot stage reads of one experiment besides the bot's state: the policy and record of
 * the default-branch checkout, the bot's pull requests (with the writers' approvals under `submit:
 * approval`) and the candidates of people's open pull requests.
 */
async function readView(
  octokit: Octokit,
  target: AutopilotRepo,
  config: AutopilotConfig,
  exp: MonitorExperiment,
  state: PilotState,
  permissions: PermissionCache,
): Promise<AutopilotView> {
  const id = exp.experiment.experiment_id;
  const context = await readAutopilot(fileSystemSource(config.workspace), id, config.clustersFile);
  const pulls = await listBotPulls(octokit, target, id, state.heads);
  if (context.policy.submit === 'approval')
    for (const b of pulls)
      if (b.state === 'open' && !b.takenOver) {
        const by = await approvedBy(octokit, target, b, permissions);
        if (by) b.approvedBy = by;
      }
  const others = config.others?.(id) ?? (await othersCandidates(octokit, target, id, config.topologiesDir));
  return { context, pulls, state, others, botLogin: target.botLogin };
}

/**
 * The same view without a write: the bot's state as stored (dashboard commands not yet answered are
 * left to the next pass). `topo autopilot status|plan` read it; null without an autopilot block.
 */
export async function peekAutopilotView(
  octokit: Octokit,
  target: AutopilotRepo,
  config: AutopilotConfig,
  exp: MonitorExperiment,
): Promise<AutopilotView | null> {
  if (!policyOf(exp.experiment)) return null;
  const { state } = await readPilotState(octokit, target, exp.experiment.experiment_id);
  return readView(octokit, target, config, exp, state, new Map());
}

/** Up to `count` proposals of `topo suggest`, none named in `exclude`. */
async function proposals(
  exp: MonitorExperiment,
  count: number,
  exclude: readonly string[],
  config: AutopilotConfig,
  files: ReturnType<typeof fileSystemSource>,
): Promise<Proposed> {
  const id = exp.experiment.experiment_id;
  const outcome = await runSuggest({
    experimentId: id,
    files,
    count: count + exclude.length,
    clustersFile: config.clustersFile,
  });
  if (outcome.proposals.length === 0)
    config.log(`autopilot ${id}: suggest proposes nothing: ${outcome.result.stop.reason}`);
  const proposals = outcome.proposals
    .filter((p) => !exclude.includes(p.candidate.name))
    .slice(0, count)
    .map((p) => ({
      candidate: p.candidate.name,
      path: p.path,
      text: p.text,
      reasoning: pullBody(p, outcome.result),
      change: p.change,
    }));
  const { stop, outlook } = outcome.result;
  return { proposals, stop, outlook: outlook ? { change: outlook.change, gainLow: outlook.gainLow } : null };
}

/**
 * The baseline's proposal (round 0) for an experiment with no baseline run: its base preset expanded
 * with the experiment's fixed inputs, as `topo init` writes baseline.yaml. None when that file is
 * on the default branch already (a person's to run) or the preset is not found.
 */
async function baselineProposal(exp: MonitorExperiment, config: AutopilotConfig): Promise<BotProposal[]> {
  const e = exp.experiment;
  const path = `${config.topologiesDir}/${e.experiment_id}/baseline.yaml`;
  if (existsSync(join(config.workspace, path))) return [];
  const found = readPresetFromCheckout(e.base_topology, config.workspace, {
    topologiesDir: config.topologiesDir,
    ...(config.presetsDir ? { overrideDir: config.presetsDir } : {}),
  });
  const preset = found ? checkPreset(found.text, found.path).value : undefined;
  if (!preset) {
    config.log(`autopilot ${e.experiment_id}: preset ${e.base_topology} not found: no baseline to open`);
    return [];
  }
  const candidate: Candidate = {
    name: 'baseline',
    parent: null,
    hypothesis: `The starting point: preset ${e.base_topology} with the experiment's fixed inputs, measured first by the autopilot.`,
    expected_effect: 'Reference seconds_per_rollout that the other candidates are compared against.',
    topology: expandPreset(preset, e),
  };
  return [
    {
      candidate: 'baseline',
      path,
      text: toYaml(
        candidate,
        ` Baseline candidate: preset ${e.base_topology} expanded to full values (opened by the autopilot).`,
      ),
      reasoning: `**Baseline.** Preset \`${e.base_topology}\` with the experiment's fixed inputs, measured first.\n\nThe experiment has no baseline run yet: this one is the reference every round is decided against. Once it is measured it is merged (\`merge: auto\`) or waits for a writer to merge it (\`merge: manual\`), and round 1 opens from it.`,
    },
  ];
}

/** The Request of a bot pull request; why none (and what a person can do) when it cannot be made. */
async function requestRun(
  octokit: Octokit,
  target: AutopilotRepo,
  config: AutopilotConfig,
  id: string,
  pull: BotPull,
): Promise<{ why: string; fix: string } | null> {
  const repo = { owner: target.owner, repo: target.repo };
  const path = `${config.topologiesDir}/${id}/${pull.candidate}.yaml`;
  const changed = await changedFiles(octokit, target, pull.pr);
  if (changed.length !== 1 || changed[0] !== path) {
    config.log(`autopilot ${id}: #${pull.pr} changes ${changed.join(', ')}, not only ${path}: no Request`);
    return {
      why: `#${pull.pr} changes ${changed.length ? changed.map((f) => `\`${inlineText(f, 120)}\``).join(', ') : 'nothing'}, not only \`${path}\``,
      fix: `restore #${pull.pr} to its one candidate file (the autopilot then requests it), or close it`,
    };
  }
  const prepared = await prepareCandidateAt(octokit, repo, pull.headSha, path, { ...config });
  if (!prepared.ok) {
    config.log(`autopilot ${id}: #${pull.pr} does not pass on the default branch: ${prepared.message}`);
    return {
      why: `it does not pass on the default branch: ${inlineText(prepared.message, 300)}`,
      fix: `fix what it names on the default branch (the autopilot then requests it), or close #${pull.pr}`,
    };
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
  return null;
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
        {
          ...deps,
          octokit,
          ...repo,
          botLogin: target.botLogin,
          defaultBranch,
          closeCommands: recordedAtClose({ octokit, ...repo, botLogin: target.botLogin }),
        },
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
 * The bot's state with the new /topo comments of the dashboard and of the issues that were it before
 * (its state keeps them: a writer may have edited the marker out) applied: written first
 * (compare-and-swap, so a comment is applied once), then each answered on its own issue.
 */
async function answerCommands(
  octokit: Octokit,
  target: AutopilotRepo,
  id: string,
  dashboard: Dashboard | null,
  permissions: PermissionCache,
): Promise<PilotState> {
  const { state } = await readPilotState(octokit, target, id);
  const issues = [...new Set([...state.dashboards, ...(dashboard ? [dashboard.number] : [])])];
  const comments: DashboardComment[] = [];
  const issueOf = new Map<number, number>();
  const gone: number[] = [];
  for (const issue of issues) {
    const read = await controlsOn(octokit, target, issue, state.lastComment, permissions);
    if (read === 'gone') gone.push(issue);
    else
      for (const c of read) {
        comments.push(c);
        issueOf.set(c.id, issue);
      }
  }
  if (comments.length === 0 && gone.length === 0) return state;
  let replies: CommandReply[] = [];
  const written = await updatePilotState(octokit, target, id, (s) => {
    const applied = applyCommands(s, comments);
    replies = applied.replies;
    return { ...applied.state, dashboards: applied.state.dashboards.filter((n) => !gone.includes(n)) };
  });
  for (const r of replies)
    await octokit.rest.issues.createComment({
      owner: target.owner,
      repo: target.repo,
      issue_number: issueOf.get(r.id) as number,
      body: r.text,
    });
  return written;
}

/** An issue's new /topo comments; `gone` when a former dashboard no longer exists (deleted, transferred). */
async function controlsOn(
  octokit: Octokit,
  target: AutopilotRepo,
  issue: number,
  since: number,
  permissions: PermissionCache,
): Promise<DashboardComment[] | 'gone'> {
  try {
    return await dashboardControls(octokit, target, issue, since, permissions);
  } catch (e) {
    const code = (e as { status?: number }).status;
    if (code === 404 || code === 410) return 'gone';
    throw e;
  }
}

/** Keeps `issue` among the experiment's dashboards in the bot's state (a write only when it is new there). */
function keepDashboard(octokit: Octokit, target: AutopilotRepo, id: string, issue: number) {
  return updatePilotState(octokit, target, id, (s) =>
    s.dashboards.includes(issue) ? s : { ...s, dashboards: [...s.dashboards, issue].slice(-DASHBOARDS_KEPT) },
  );
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
  // a refused write throws (a 403: the job lacks `checks: write`): the stage shows it on the dashboard,
  // since branch protection that requires topo/validate would otherwise wait for it silently
  await upsertCheckRun(octokit, {
    ...repo,
    name: VALIDATE_CHECK_NAME,
    head_sha: head,
    conclusion: report.errorCount > 0 ? 'failure' : 'success',
    title: `${report.errorCount} error(s), ${report.warningCount} warning(s) in ${report.files.length} file(s)`,
    summary: summary || 'No topology files changed.',
  });
}
