// The real parts of `topo demo --autopilot` (AutopilotDemoParts in ./autopilot.ts). The repository is
// the local GitHub API's (src/github-local, loaded from dist/github-local.js beside the CLI bundle: it
// checks every request against GitHub's OpenAPI description and GraphQL schema, development
// dependencies the CLI bundle never carries). Each pass is the monitor as a repository's workflow runs
// it: a fresh checkout of the default branch, the monitor action's ports (actions/monitor/ports.ts)
// over that API, the local Slurm and Prometheus, and the monitor's stages with the autopilot's.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import { buildMonitorPorts } from '../../actions/monitor/ports.js';
import { dashboardMarker } from '../autopilot/dashboard.js';
import { readBotMarker } from '../autopilot/pulls.js';
import { MONITOR_CHECK_NAME } from '../github/check-runs.js';
import { createOctokit } from '../github/client.js';
import { stickyMarker } from '../github/sticky-comment.js';
import type { GitHubServer, Repo } from '../github-local/index.js';
import { autopilot } from '../monitor/autopilot.js';
import { monitorPass, STAGES, withStage } from '../monitor/pass.js';
import { createRecord, recordPaths } from '../record/model.js';
import { renderRecordMarkdown } from '../record/render.js';
import { slurmClientForCluster } from '../slurm/for-cluster.js';
import { isLive } from '../slurm/types.js';
import { toYaml } from '../topology/init.js';
import type { Experiment } from '../types/generated/experiment.js';
import { experimentPrefix } from '../usecases/submit.js';
import {
  type AutopilotDemoParts,
  DEMO_REQUIRED_CHECKS,
  type PullPage,
  type ScriptedWriter,
} from './autopilot.js';
import type { HubView, PullView } from './autopilot-view.js';
import { localCluster } from './cluster.js';
import { DEMO_CLUSTER, demoExperiment, loadCluster } from './parts.js';
import type { ClusterEnv } from './run.js';

/** Why the autopilot demo cannot start its local GitHub API: what to run (a user's setup, exit 2). */
export class LocalGitHubMissing extends Error {
  override name = 'LocalGitHubMissing';
}

/** The local GitHub API module, built beside the CLI bundle (npm run build). */
export async function loadLocalGitHub(root: string): Promise<typeof import('../github-local/index.js')> {
  const file = join(root, 'dist', 'github-local.js');
  if (!existsSync(file))
    throw new LocalGitHubMissing(`${file} is missing: run \`npm ci && npm run build\` first`);
  const module = (await import(pathToFileURL(file).href)) as typeof import('../github-local/index.js');
  return module;
}

/** The monitor's pass as the repository's workflow runs it: the stages with the autopilot after decide. */
const DEMO_STAGES = withStage(STAGES, { name: 'autopilot', run: autopilot }, { after: 'decide' });
/** As the plain demo: a loaded 2-core machine can take a simulated hour to scrape a new run's first target. */
const PASS_OPTIONS = { tickSeconds: 1, lagSeconds: 1, telemetryDeadlineMinutes: 60 };

function slurmEnv(env: NodeJS.ProcessEnv, clusterEnv: ClusterEnv): NodeJS.ProcessEnv {
  return { ...env, SLURM_CONF: String(clusterEnv.slurmConf ?? env.SLURM_CONF ?? '') };
}

/** Writes the default branch's files into `dir` (emptied first): the checkout a workflow run starts from. */
function checkout(gh: GitHubServer, repo: Repo, dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  for (const [path, text] of gh.files(repo, repo.defaultBranch)) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

/** The experiment from the sample command with the autopilot's policy, and its default branch's files. */
function prepareRepository(
  root: string,
  command: string,
  clusterEnv: ClusterEnv,
  dateStamp: string,
  policy: Partial<Experiment>,
): { experiment: Experiment; files: Record<string, string> } {
  const built = demoExperiment(root, command, clusterEnv, dateStamp);
  const experiment: Experiment = { ...built.experiment, ...policy };
  const id = experiment.experiment_id;
  const record = createRecord(experiment, built.cluster);
  const paths = recordPaths(id);
  const files: Record<string, string> = {
    'topologies/clusters.yaml': readFileSync(clusterEnv.clustersFile, 'utf8'),
    [`topologies/${id}/experiment.yaml`]: toYaml(
      experiment,
      ` Experiment ${id}, created by \`topo demo --autopilot\` from the sample command, with its autopilot policy.`,
    ),
    [paths.json]: `${JSON.stringify(record, null, 2)}\n`,
    [paths.markdown]: renderRecordMarkdown(record),
  };
  return { experiment, files };
}

/** The local GitHub API started with the demo's repository (its default branch protected as a real one). */
async function startLocal(root: string, files: Record<string, string>): Promise<Local> {
  const { startGitHubServer } = await loadLocalGitHub(root);
  const server = await startGitHubServer();
  const repo = server.createRepo('demo/topologies', { files });
  // branch protection: what merge: auto waits for, GitHub refuses a merge without
  server.protect(repo, DEMO_REQUIRED_CHECKS);
  return { server, repo };
}

/** One monitor pass as the workflow runs it: a fresh checkout, the action's ports, the autopilot's stages. */
async function workflowPass(
  { server: gh, repo }: Local,
  env: NodeJS.ProcessEnv,
  clusterEnv: ClusterEnv,
  workDir: string,
): Promise<string[]> {
  const dir = join(workDir, 'checkout');
  checkout(gh, repo, dir);
  const octokit = createOctokit({ token: gh.token, baseUrl: gh.url });
  const log: string[] = [];
  const ports = buildMonitorPorts(octokit, {
    workspace: dir,
    topologiesDir: 'topologies',
    clustersFile: 'topologies/clusters.yaml',
    owner: repo.owner.login,
    repo: repo.name,
    botLogin: gh.botLogin,
    env: { ...slurmEnv(env, clusterEnv), GITHUB_SERVER_URL: gh.url },
    log: (line) => log.push(line),
  });
  try {
    const report = await monitorPass(ports, PASS_OPTIONS, DEMO_STAGES);
    return report.errors;
  } finally {
    await ports.close();
  }
}

/** Cancels every live Slurm job of the experiment. */
async function cancelExperimentJobs(
  env: NodeJS.ProcessEnv,
  experimentId: string,
  clusterEnv: ClusterEnv,
): Promise<void> {
  const cluster = loadCluster(clusterEnv);
  const slurm = slurmClientForCluster(DEMO_CLUSTER, cluster, { env: slurmEnv(env, clusterEnv) });
  for (const job of await slurm.jobs(experimentPrefix(experimentId)))
    if (isLive(job.status)) await slurm.cancel(job.id);
}

/** The monitor passes' requests so far: GraphQL queries and GETs are reads, the rest writes. */
function requestCounts({ server }: Local): { reads: number; writes: number } {
  const calls = server.calls();
  const reads = calls.filter((c) => c.method === 'GET' || c.path === '/graphql').length;
  return { reads, writes: calls.length - reads };
}

export function realAutopilotParts(
  root: string,
  env: NodeJS.ProcessEnv,
  workDir: string,
): AutopilotDemoParts {
  let local: Local | undefined;
  const need = (): Local => {
    if (!local) throw new Error('topo demo --autopilot: the local GitHub API is not started');
    return local;
  };
  return {
    cluster: localCluster(root, env),
    prepare: (command, clusterEnv, dateStamp, policy) =>
      Promise.resolve(prepareRepository(root, command, clusterEnv, dateStamp, policy)),
    async github(files) {
      local = await startLocal(root, files);
      const { repo } = local;
      return {
        url: `${local.server.url}/repos/${repo.owner.login}/${repo.name}`,
        defaultBranch: repo.defaultBranch,
      };
    },
    pass: async (clusterEnv) => workflowPass(need(), env, clusterEnv, workDir),
    cancelAll: (experimentId, clusterEnv) => cancelExperimentJobs(env, experimentId, clusterEnv),
    view: (id) => hubView(need(), id),
    writer: (id) => scriptedWriter(need(), id),
    files: () => need().server.files(need().repo, need().repo.defaultBranch),
    pages: (id) => pullPages(need(), id),
    requests: () => requestCounts(need()),
    async close() {
      await local?.server.close();
      local = undefined;
    },
  };
}

/** The running local GitHub API and the demo's repository on it. */
interface Local {
  server: GitHubServer;
  repo: Repo;
}

/** Each bot pull request of the experiment: its title, body and comments, as its page shows them. */
function pullPages({ server, repo }: Local, id: string): PullPage[] {
  const state = server.state;
  return state
    .pullsOf(repo)
    .filter((p) => p.head.ref.startsWith(`topo/autopilot/${id}/`))
    .map((p) => ({
      number: p.number,
      title: `#${p.number} ${p.title}`,
      markdown: [
        p.body ?? '',
        ...state.commentsOn(repo, p.number).map((c) => `---\n\n**@${c.user.login}**\n\n${c.body}`),
      ].join('\n\n'),
    }));
}

/** The first line of a comment body, without Markdown emphasis. */
const firstLine = (body: string) => (body.split('\n')[0] ?? '').replace(/[*`]/g, '').trim();

/**
 * What a person watching the demo's repository sees (./autopilot-view.ts HubView): the bot's pull
 * requests of the experiment with their round, hypothesis, decision (the `topo/monitor` check run's
 * title once it concluded) and closing comment; the dashboard with the bot's replies on it.
 */
export function hubView({ server, repo }: Local, id: string): HubView {
  const state = server.state;
  const mine = (login: string) => login === server.botLogin;
  const pulls: PullView[] = state
    .pullsOf(repo)
    .filter((p) => mine(p.user.login) && p.head.ref.startsWith(`topo/autopilot/${id}/`))
    .map((p) => {
      const check = state.checkRuns
        .filter(
          (c) =>
            c.repo === repo &&
            c.headSha === p.head.sha &&
            c.name === MONITOR_CHECK_NAME &&
            c.status === 'completed',
        )
        .sort((a, b) => b.id - a.id)[0];
      const closing = state
        .commentsOn(repo, p.number)
        .find((c) => mine(c.user.login) && c.body.startsWith('Closed by the autopilot:'));
      const hypothesis = /\*\*(?:Hypothesis|Baseline)\.\*\* ([^\n]+)/.exec(p.body ?? '')?.[1] ?? null;
      return {
        number: p.number,
        candidate: p.head.ref.split('/').at(-1) as string,
        round: readBotMarker(p.body, id)?.round ?? null,
        state: p.merged ? 'merged' : p.state === 'open' ? 'open' : 'closed',
        hypothesis: hypothesis?.replace(/^Autopilot round \d+: /, '') ?? null,
        decision: check?.output.title ?? null,
        closing: closing ? firstLine(closing.body).replace(/^Closed by the autopilot: /, '') : null,
      } satisfies PullView;
    });
  const issue = state.itemsOf(repo).find((i) => i.isIssue && (i.body ?? '').startsWith(dashboardMarker(id)));
  const comments = issue ? state.commentsOn(repo, issue.number).filter((c) => mine(c.user.login)) : [];
  return {
    pulls,
    dashboard: issue ? { number: issue.number, open: issue.state === 'open', body: issue.body ?? '' } : null,
    replies: comments
      .filter((c) => c.body.startsWith('@'))
      .map((c) => firstLine(c.body).replace(/\u200b/g, '')),
    reported: comments.some((c) => c.body.includes(stickyMarker('report'))),
  };
}

/** The quick run's writer, `alice`: comments on the dashboard, and a commit of hers on the default branch. */
export function scriptedWriter({ server, repo }: Local, id: string): ScriptedWriter {
  server.addCollaborator(repo, 'alice', 'write');
  return {
    comment(body) {
      const issue = server.state
        .itemsOf(repo)
        .find((i) => i.isIssue && (i.body ?? '').startsWith(dashboardMarker(id)));
      if (issue) server.comment(repo, issue.number, 'alice', body);
    },
    lowerBudget(gpuHours) {
      const path = `topologies/${id}/experiment.yaml`;
      const doc = parseDocument(server.files(repo, repo.defaultBranch).get(path) ?? '');
      doc.setIn(['autopilot', 'gpu_hours'], gpuHours);
      const parent = server.state.branchSha(repo, repo.defaultBranch);
      const sha = server.state.commitFiles(
        server.state.user('alice'),
        parent,
        { [path]: doc.toString({ lineWidth: 0 }) },
        `autopilot: lower the budget to ${gpuHours} GPU-hours`,
      );
      repo.refs.set(`refs/heads/${repo.defaultBranch}`, sha);
    },
  };
}
