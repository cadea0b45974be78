// `topo autopilot status|plan <experiment>`: what the dashboard shows, and the next round as the
// autopilot would open it, from the checkout's files (the default branch's, for the policy). Writes
// nothing: no file, no branch, no pull request, no Request.

import { botBranch } from '../../autopilot/core.js';
import { actionText, renderDashboard } from '../../autopilot/dashboard.js';
import { roundHypothesis } from '../../autopilot/runs.js';
import { AutopilotConfigError, planFor, readAutopilot } from '../../usecases/autopilot.js';
import { runSuggest, SuggestError } from '../../usecases/suggest.js';
import { parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { CLUSTERS_OPTION } from './options.js';
import { clustersFileOption, fileSystemSource, presetOptionsFor } from './validate.js';

async function context(experimentId: string, io: CliIO, clusters: string | undefined) {
  try {
    return await readAutopilot(fileSystemSource(io.cwd), experimentId, clusters);
  } catch (error) {
    if (error instanceof AutopilotConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

/** The proposals of the round the plan opens, as they would be opened (no writes). */
async function proposalLines(
  experimentId: string,
  io: CliIO,
  round: number,
  count: number,
  clusters?: string,
) {
  try {
    const outcome = await runSuggest({
      experimentId,
      files: fileSystemSource(io.cwd),
      count,
      presets: presetOptionsFor(io),
      ...(clusters ? { clustersFile: clusters } : {}),
    });
    if (outcome.proposals.length === 0)
      return [`  no proposal: ${outcome.result.stop.reason} (the autopilot concludes then)`];
    return outcome.proposals.flatMap((p) => [
      `  ${botBranch(experimentId, p.candidate.name)}  (${p.path})`,
      `    change:     ${p.change}`,
      `    hypothesis: ${roundHypothesis(round, p.candidate.hypothesis ?? '')}`,
      `    expected:   ${p.candidate.expected_effect ?? ''}`,
    ]);
  } catch (error) {
    if (error instanceof SuggestError) throw new ConfigError(error.message);
    throw error;
  }
}

export const autopilotCommand: Command = {
  name: 'autopilot',
  summary: "Show an experiment's autopilot: its dashboard, or the next round it would open",
  help: {
    synopsis: 'topo autopilot <status|plan> <experiment> [options]',
    description:
      "status: what the experiment's dashboard shows (rounds, decisions, GPU-hours spent, committed and left, the best against the baseline, what comes next or why it waits), from the checkout's experiment.yaml and record. plan: the next actions as the autopilot would take them, with the proposals of a round it would open (branch, change, hypothesis). Both write nothing. Run them on the default branch: the policy is read from there. Exit 2 when the experiment or its autopilot block is missing.",
    options: [CLUSTERS_OPTION],
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
    if (sub === 'status') {
      io.stdout(`${renderDashboard(experimentId, runs, plan)}\n`);
      return EXIT.ok;
    }
    const lines = [`${experimentId}: round ${plan.round}${plan.waiting ? `, waiting: ${plan.waiting}` : ''}`];
    if (plan.actions.length === 0) lines.push('nothing to do now');
    for (const a of plan.actions) {
      lines.push(`- ${actionText(a)}`);
      if (a.kind === 'open')
        lines.push(...(await proposalLines(experimentId, io, a.round, a.count, clusters)));
    }
    io.stdout(`${lines.join('\n')}\n`);
    return EXIT.ok;
  },
};
