// `topo autopilot status|plan <experiment>`: what the dashboard shows, and the next round as the
// autopilot would open it, from the checkout's files (the default branch's, for the policy). Writes
// nothing: no file, no branch, no pull request, no Request.

import { botBranch, type PilotPlan } from '../../autopilot/core.js';
import { actionText, renderDashboard } from '../../autopilot/dashboard.js';
import { roundHypothesis } from '../../autopilot/runs.js';
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

export const autopilotCommand: Command = {
  name: 'autopilot',
  summary: "Show an experiment's autopilot: its dashboard, or the next round it would open",
  help: {
    synopsis: 'topo autopilot <status|plan> <experiment> [options]',
    description:
      "status: what the experiment's dashboard shows (rounds, decisions, GPU-hours spent, committed and left, the best against the baseline, what comes next or why it waits), from the checkout's experiment.yaml and record. plan: the next actions as the autopilot would take them, with the proposals of a round it would open (branch, change, hypothesis). Both write nothing. Run them on the default branch: the policy is read from there. Exit 2 when the experiment or its autopilot block is missing.",
    options: [CLUSTERS_OPTION, JSON_OPTION],
    examples: [
      'topo autopilot status topology-opt-vavam-ord-20261202',
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
    const ctx = await context(experimentId, io, clusters);
    const { runs, plan } = planFor(ctx);
    const json = flag(parsed, 'json');
    const base = { schema_version: 1, subcommand: sub, experiment_id: experimentId };
    if (sub === 'status') {
      const dashboard = renderDashboard(experimentId, runs, plan);
      io.stdout(
        json
          ? `${JSON.stringify({ ...base, round: plan.round, waiting: plan.waiting, budget: snakeKeys(plan.budget), dashboard })}\n`
          : `${dashboard}\n`,
      );
      return EXIT.ok;
    }
    const doc = await planDocument(experimentId, io, plan, clusters);
    if (json) {
      io.stdout(`${JSON.stringify({ ...base, ...doc })}\n`);
      return EXIT.ok;
    }
    const lines = [`${experimentId}: round ${plan.round}${plan.waiting ? `, waiting: ${plan.waiting}` : ''}`];
    if (doc.actions.length === 0) lines.push('nothing to do now');
    for (const a of doc.actions) {
      lines.push(`- ${a.text}`);
      if (a.proposals) lines.push(...proposalLines({ proposals: a.proposals, stop: a.stop ?? null }));
    }
    io.stdout(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
