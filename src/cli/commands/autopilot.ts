// `topo autopilot status|plan <experiment>`: what the dashboard shows, and the next round as the
// autopilot would open it. With `--repo OWNER/NAME` (and GITHUB_TOKEN) they read what the monitor's
// pass reads (the bot's state, its pull requests, the live runs with their decisions from Slurm and
// Prometheus) and the model the dashboard is written from (src/monitor/autopilot.ts
// autopilotDashboard), so they agree with it; without, the checkout's record alone, and they say so.
// Writes nothing: no file, no branch, no pull request, no Request, no reply to a dashboard command.

import { peekAutopilotView } from '../../../actions/monitor/autopilot.js';
import { buildMonitorPorts } from '../../../actions/monitor/ports.js';
import { botBranch, type PilotPlan } from '../../autopilot/core.js';
import { actionText, renderDashboard } from '../../autopilot/dashboard.js';
import { roundHypothesis } from '../../autopilot/runs.js';
import { dashboardHelp } from '../../commands/help.js';
import { COMMANDS } from '../../commands/registry.js';
import { createOctokit, splitRepository } from '../../github/client.js';
import { autopilotDashboard } from '../../monitor/autopilot.js';
import { runStages, stagesNamed } from '../../monitor/pass.js';
import { newPassState } from '../../monitor/state.js';
import { AutopilotConfigError, planFor, readAutopilot } from '../../usecases/autopilot.js';
import { runSuggest, SuggestError } from '../../usecases/suggest.js';
import { flag, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { snakeKeys } from '../json.js';
import { CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { clustersFileOption, fileSystemSource, presetOptionsFor } from './validate.js';

async function context(experimentId: string, io: CliIO, clusters: string | undefined) {
  try {
    return await readAutopilot(fileSystemSource(io.cwd), experimentId, clusters);
  } catch (error) {
    if (error instanceof AutopilotConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

interface Proposal {
  branch: string;
  path: string;
  change: string;
  hypothesis: string;
  expected_effect: string;
}

/** The proposals of the round the plan opens, as they would be opened (no writes), or why there are none. */
async function proposals(
  experimentId: string,
  io: CliIO,
  round: number,
  count: number,
  clusters?: string,
): Promise<{ proposals: Proposal[]; stop: string | null }> {
  try {
    const outcome = await runSuggest({
      experimentId,
      files: fileSystemSource(io.cwd),
      count,
      presets: presetOptionsFor(io),
      ...(clusters ? { clustersFile: clusters } : {}),
    });
    return {
      stop: outcome.proposals.length === 0 ? outcome.result.stop.reason : null,
      proposals: outcome.proposals.map((p) => ({
        branch: botBranch(experimentId, p.candidate.name),
        path: p.path,
        change: p.change,
        hypothesis: roundHypothesis(round, p.candidate.hypothesis ?? ''),
        expected_effect: p.candidate.expected_effect ?? '',
      })),
    };
  } catch (error) {
    if (error instanceof SuggestError) throw new ConfigError(error.message);
    throw error;
  }
}

function proposalLines(found: { proposals: Proposal[]; stop: string | null }): string[] {
  if (found.stop !== null) return [`  no proposal: ${found.stop} (the autopilot concludes then)`];
  return found.proposals.flatMap((p) => [
    `  ${p.branch}  (${p.path})`,
    `    change:     ${p.change}`,
    `    hypothesis: ${p.hypothesis}`,
    `    expected:   ${p.expected_effect}`,
  ]);
}

/** `plan`: the next actions, each `open` with the proposals of its round. */
async function planDocument(experimentId: string, io: CliIO, plan: PilotPlan, clusters?: string) {
  const actions: { kind: string; text: string; proposals?: Proposal[]; stop?: string | null }[] = [];
  for (const a of plan.actions)
    actions.push({
      kind: a.kind,
      text: actionText(a),
      ...(a.kind === 'open' ? await proposals(experimentId, io, a.round, a.count, clusters) : {}),
    });
  return { round: plan.round, waiting: plan.waiting, actions };
}

/** How a live read reaches the repository: `--repo`, the token and the bot's login. */
interface Live {
  repo: string;
  botLogin: string;
}

/** The model of the dashboard from the checkout's record alone (no GitHub access), said as such. */
async function fromRecord(experimentId: string, io: CliIO, clusters: string | undefined) {
  const ctx = await context(experimentId, io, clusters);
  const { runs, plan } = planFor(ctx);
  const note =
    'From the record on this checkout only: the bot’s state and the live runs are left out (give --repo OWNER/NAME and GITHUB_TOKEN to read what the dashboard shows).';
  return {
    runs,
    plan,
    text: `${renderDashboard(experimentId, runs, plan, dashboardHelp(COMMANDS))}\n\n${note}`,
    note,
  };
}

/**
 * The dashboard's model as the monitor's pass reads it, writing nothing: its read, observe and decide
 * stages over the repository's open pull requests, Slurm and Prometheus, then the bot's state and pulls.
 */
async function fromPass(experimentId: string, io: CliIO, clusters: string | undefined, live: Live) {
  const token = io.env.GITHUB_TOKEN ?? io.env.GH_TOKEN;
  if (!token)
    throw new ConfigError(
      '--repo reads the bot’s state and the live runs through the GitHub API: set GITHUB_TOKEN (read access to the repository)',
    );
  let target: { owner: string; repo: string };
  try {
    target = splitRepository(live.repo);
  } catch (error) {
    throw new UsageError(`--repo ${live.repo}: ${(error as Error).message}`);
  }
  await context(experimentId, io, clusters); // the same errors as without --repo
  const octokit = createOctokit({ token, baseUrl: io.env.GITHUB_API_URL });
  const config = {
    workspace: io.cwd,
    topologiesDir: 'topologies',
    clustersFile: clusters ?? 'topologies/clusters.yaml',
    ...target,
    botLogin: live.botLogin,
    env: io.env,
    log: () => {},
  };
  const ports = buildMonitorPorts(octokit, config);
  try {
    const pass = await runStages(
      newPassState({ tickSeconds: 60 }),
      ports,
      stagesNamed('read', 'observe', 'decide'),
    );
    const e = pass.experiments.find((x) => x.id === experimentId);
    if (!e) throw new ConfigError(`the monitor reads no experiment ${experimentId} from this checkout`);
    const view = await peekAutopilotView(octokit, { ...target, botLogin: live.botLogin }, config, e.exp);
    if (!view) throw new ConfigError(`${experimentId} has no autopilot block`);
    const read = autopilotDashboard(e, view);
    const note = e.errors.length ? `Read with errors: ${e.errors.join('; ')}` : null;
    return { ...read, text: note ? `${read.text}\n\n${note}` : read.text, note };
  } finally {
    await ports.close();
  }
}

export const autopilotCommand: Command = {
  name: 'autopilot',
  summary: "Show an experiment's autopilot: its dashboard, or the next round it would open",
  help: {
    synopsis: 'topo autopilot <status|plan> <experiment> [--repo OWNER/NAME] [options]',
    description:
      "status: what the experiment's dashboard shows (rounds, decisions, GPU-hours spent, committed and left, the best against the baseline, what needs a person, what comes next or why it waits). plan: the next actions as the autopilot would take them, with the proposals of a round it would open (branch, change, hypothesis). With --repo (and GITHUB_TOKEN; GITHUB_API_URL for GitHub Enterprise) they read what the monitor reads: the bot's state, its pull requests and the live runs from Slurm and Prometheus, so they agree with the dashboard; without, the checkout's record alone, and they say so. Both write nothing. Run them on a checkout of the default branch: the policy is read from there. Exit 2 when the experiment or its autopilot block is missing.",
    options: [
      {
        name: 'repo',
        type: 'string',
        value: 'OWNER/NAME',
        description: 'read the bot’s state and the live runs of this repository (GITHUB_TOKEN)',
      },
      {
        name: 'bot-login',
        type: 'string',
        value: 'LOGIN',
        description: 'the login the monitor writes as',
        default: 'github-actions[bot]',
      },
      CLUSTERS_OPTION,
      JSON_OPTION,
    ],
    examples: [
      'topo autopilot status topology-opt-vavam-ord-20261202 --repo my-org/sim-topologies',
      'topo autopilot plan topology-opt-vavam-ord-20261202',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(autopilotCommand.help.options, args, io.env);
    const [sub, experimentId, extra] = parsed.positionals;
    if (sub !== 'status' && sub !== 'plan')
      throw new UsageError(
        sub ? `unknown autopilot subcommand "${sub}" (status or plan)` : 'status or plan?',
      );
    if (!experimentId) throw new UsageError('which experiment? give its id');
    if (extra) throw new UsageError(`unexpected argument "${extra}"`);
    const clusters = clustersFileOption(str(parsed, 'clusters'), io);
    const repo = str(parsed, 'repo');
    const read = repo
      ? await fromPass(experimentId, io, clusters, {
          repo,
          botLogin: str(parsed, 'bot-login') ?? 'github-actions[bot]',
        })
      : await fromRecord(experimentId, io, clusters);
    const json = flag(parsed, 'json');
    const base = {
      schema_version: 1,
      subcommand: sub,
      experiment_id: experimentId,
      source: repo ? 'pass' : 'record',
    };
    if (sub === 'status') {
      io.stdout(
        json
          ? `${JSON.stringify({ ...base, round: read.plan.round, waiting: read.plan.waiting, budget: snakeKeys(read.plan.budget), needs_a_person: read.plan.stalls, dashboard: read.text })}\n`
          : `${read.text}\n`,
      );
      return EXIT.ok;
    }
    return printPlan(experimentId, io, read.plan, { json, base, clusters, note: read.note });
  },
};

async function printPlan(
  experimentId: string,
  io: CliIO,
  plan: PilotPlan,
  o: { json: boolean; base: Record<string, unknown>; clusters: string | undefined; note: string | null },
): Promise<number> {
  const doc = await planDocument(experimentId, io, plan, o.clusters);
  if (o.json) {
    io.stdout(`${JSON.stringify({ ...o.base, ...doc })}\n`);
    return EXIT.ok;
  }
  const lines = [`${experimentId}: round ${plan.round}${plan.waiting ? `, waiting: ${plan.waiting}` : ''}`];
  if (doc.actions.length === 0) lines.push('nothing to do now');
  for (const a of doc.actions) {
    lines.push(`- ${a.text}`);
    if (a.proposals) lines.push(...proposalLines({ proposals: a.proposals, stop: a.stop ?? null }));
  }
  for (const s of plan.stalls)
    lines.push(`needs a person: ${s.pr !== undefined ? `#${s.pr}: ` : ''}${s.what}; ${s.fix}`);
  if (o.note) lines.push(o.note);
  io.stdout(`${lines.join('\n')}\n`);
  return EXIT.ok;
}
