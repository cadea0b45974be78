// `topo suggest <experiment>`: the next candidates from the record's evidence, written as
// candidate files (or opened as pull requests), or the advice to stop, with the reason.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { stringify } from 'yaml';
import { createOctokit, splitRepository } from '../../github/client.js';
import { predictionSentence } from '../../suggest/suggest.js';
import type { ProposalPrediction } from '../../suggest/types.js';
import {
  candidatesInOpenPulls,
  type OpenedPull,
  openPullRequests,
  type PullTarget,
  runSuggest,
  SuggestError,
  type SuggestOutcome,
} from '../../usecases/suggest.js';
import { flag, num, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { clustersFileOption, fileSystemSource, presetOptionsFor } from './validate.js';

function toJson(outcome: SuggestOutcome, pulls: OpenedPull[], written: boolean) {
  const { result } = outcome;
  return {
    schema_version: 1,
    experiment_id: outcome.experiment.experiment_id,
    parent: result.parent,
    stop: result.stop,
    memory_model: {
      model: result.memory.model,
      ...(result.memory.envelope ? { envelope: result.memory.envelope } : {}),
      source: result.memory.source,
      samples: result.memory.samples,
      max_residual_gib: result.memory.maxResidualGiB,
      margin_gib: result.memory.marginGiB,
      notes: result.memory.notes,
    },
    proposals: outcome.proposals.map((p) => ({
      name: p.candidate.name,
      path: p.path,
      written,
      parent: p.candidate.parent,
      kind: p.kind,
      service: p.service ?? null,
      change: p.change,
      hypothesis: p.candidate.hypothesis,
      expected_effect: p.candidate.expected_effect,
      hash: p.hash,
      score: p.score,
      predicted_memory: p.predictedMemory.map((m) => ({
        gpu: m.gpu,
        gib: Math.round(m.gib * 10) / 10,
        fraction: Math.round(m.fraction * 1000) / 1000,
      })),
      prediction: p.prediction ? predictionJson(p.prediction) : null,
    })),
    not_proposed: result.rejected,
    invalid: outcome.invalid,
    pull_requests: pulls,
    calibration: result.calibration
      ? {
          runs: result.calibration.runs,
          misfit: result.calibration.misfit,
          ranked: result.calibration.ranked,
          calibration_error: result.calibration.calibrationError,
          level: result.calibration.level,
        }
      : null,
  };
}

/** A proposal's prediction in the CLI's snake_case. */
function predictionJson(p: ProposalPrediction) {
  return {
    seconds_per_rollout: p.seconds,
    low: p.low,
    high: p.high,
    level: p.level,
    gain: p.gain,
    gain_low: p.gainLow,
    gain_high: p.gainHigh,
    parent: p.parent,
    parent_seconds_per_rollout: p.parentSeconds,
    expected_gpu_hours: p.expectedGpuHours,
    gain_per_gpu_hour: p.gainPerGpuHour,
    calibrated_on: p.calibration.runs,
  };
}

function human(outcome: SuggestOutcome, pulls: OpenedPull[], written: boolean): string {
  const { result } = outcome;
  const lines: string[] = [];
  const m = result.memory;
  lines.push(`memory model: ${m.source} (${m.notes.join('; ')})`);
  if (outcome.proposals.length > 0) {
    lines.push(
      `${outcome.proposals.length} proposal(s) from ${result.parent}'s evidence${written ? '' : ' (not written)'}:`,
    );
    for (const p of outcome.proposals) {
      const peak = p.predictedMemory.reduce(
        (a, b) => (b.fraction > a.fraction ? b : a),
        p.predictedMemory[0]!,
      );
      const pull = pulls.find((x) => x.name === p.candidate.name);
      lines.push('');
      lines.push(
        `  ${p.path}${pull ? `  → pull request #${pull.number}${pull.created ? '' : ' (already open)'} ${pull.url}` : ''}`,
      );
      lines.push(`    change:     ${p.change}`);
      lines.push(`    hypothesis: ${p.candidate.hypothesis}`);
      lines.push(`    expected:   ${p.candidate.expected_effect}`);
      if (p.prediction) lines.push(`    predicted:  ${predictionSentence(p.prediction)}`);
      if (peak)
        lines.push(
          `    memory:     peak GPU ${peak.gpu} ${peak.gib.toFixed(1)} GiB (${Math.round(peak.fraction * 100)}%)`,
        );
    }
    lines.push('');
  }
  lines.push(`${result.stop.stop ? 'STOP' : 'continue'}: ${result.stop.reason}`);
  if (result.rejected.length > 0) {
    lines.push(`not proposed (${result.rejected.length}):`);
    for (const r of result.rejected.slice(0, 10)) lines.push(`  - ${r.change}: ${r.reason}`);
  }
  for (const i of outcome.invalid) lines.push(`refused by validation: ${i.name}: ${i.errors.join('; ')}`);
  if (m.source === 'fitted') {
    lines.push('fitted memory model (clusters.yaml `memory_model` shape):');
    lines.push(
      stringify({ memory_model: m.model })
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** Where --open-prs reads and opens pull requests: the pull requests are the candidates, open ones count as tried. */
function openPrsTarget(
  parsed: Parsed,
  io: CliIO,
): { octokit: ReturnType<typeof createOctokit>; target: PullTarget } {
  const token = io.env.GITHUB_TOKEN ?? io.env.GH_TOKEN;
  if (!token) throw new UsageError('--open-prs needs a token in GITHUB_TOKEN (or GH_TOKEN)');
  const fullName = str(parsed, 'repo');
  if (!fullName) throw new UsageError('--open-prs needs --repo owner/name (or GITHUB_REPOSITORY)');
  const base = str(parsed, 'base');
  return {
    octokit: createOctokit({
      token,
      ...(io.env.GITHUB_API_URL ? { baseUrl: io.env.GITHUB_API_URL } : {}),
    }),
    target: { ...splitRepository(fullName), ...(base ? { base } : {}) },
  };
}

/** Each proposal's file under `cwd`, never over an existing one (`wx`). */
function writeProposals(outcome: SuggestOutcome, cwd: string): void {
  for (const p of outcome.proposals) {
    const file = resolve(cwd, p.path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, p.text, { flag: 'wx' });
  }
}

export const suggestCommand: Command = {
  name: 'suggest',
  summary: 'Propose the next candidates',
  help: {
    synopsis: 'topo suggest <experiment> [options]',
    description:
      "The next candidates from the record's evidence (bottleneck, memory, tried changes), each checked by the validator; written as candidate files, or opened as pull requests with --open-prs; or the advice to stop, with the reason. --json follows schemas/cli/suggest.schema.json.",
    options: [
      {
        name: 'count',
        short: 'n',
        type: 'integer',
        min: 1,
        max: 16,
        value: 'N',
        description:
          'at most this many proposals; given, moves the calibrated model expects to lose to its best (dominated, which the autopilot leaves out) fill the round up to it, each saying so',
        default: "the experiment's free slots (max_parallel)",
      },
      {
        name: 'open-prs',
        type: 'boolean',
        description: 'open one pull request per proposal (open ones count as tried)',
      },
      {
        name: 'repo',
        type: 'string',
        value: 'OWNER/NAME',
        description: 'repository for --open-prs',
        env: 'GITHUB_REPOSITORY',
      },
      {
        name: 'base',
        type: 'string',
        value: 'BRANCH',
        description: 'base branch of the pull requests',
        default: 'the default branch',
      },
      { name: 'dry-run', type: 'boolean', description: 'print the proposals; write and open nothing' },
      { name: 'force', short: 'f', type: 'boolean', description: 'propose even when the evidence says stop' },
      CLUSTERS_OPTION,
      JSON_OPTION,
    ],
    examples: [
      'topo suggest topology-opt-vavam-ord-20261202 --dry-run',
      'GITHUB_TOKEN=… topo suggest topology-opt-vavam-ord-20261202 --open-prs --repo me/topologies',
    ],
    environment: [
      { name: 'GITHUB_TOKEN, GH_TOKEN', description: 'token for --open-prs' },
      { name: 'GITHUB_API_URL', description: 'GitHub API base URL (GitHub Enterprise)' },
    ],
  },
  async run(args, io: CliIO) {
    const parsed = parseOptions(suggestCommand.help.options, args, io.env);
    const [experimentId, ...extra] = parsed.positionals;
    if (!experimentId || extra.length > 0)
      throw new UsageError('name exactly one experiment (the folder under topologies/)');
    const count = num(parsed, 'count');
    const openPrs = flag(parsed, 'open-prs');
    const dryRun = flag(parsed, 'dry-run');
    const clustersFile = clustersFileOption(str(parsed, 'clusters'), io);
    const github = openPrs ? openPrsTarget(parsed, io) : undefined;
    let outcome: SuggestOutcome;
    try {
      outcome = await runSuggest({
        experimentId,
        files: fileSystemSource(io.cwd),
        ...(clustersFile ? { clustersFile } : {}),
        presets: presetOptionsFor(io),
        ...(count !== undefined ? { count, fillCount: true } : {}),
        force: flag(parsed, 'force'),
        ...(github
          ? { elsewhere: await candidatesInOpenPulls(github.octokit, github.target, experimentId) }
          : {}),
      });
    } catch (error) {
      if (error instanceof SuggestError) throw new ConfigError(error.message);
      throw error;
    }

    let pulls: OpenedPull[] = [];
    const writeLocally = !dryRun && !openPrs;
    if (github && !dryRun && outcome.proposals.length > 0) {
      pulls = await openPullRequests(github.octokit, github.target, outcome);
    }
    if (writeLocally) writeProposals(outcome, io.cwd);
    io.stdout(
      flag(parsed, 'json')
        ? `${JSON.stringify(toJson(outcome, pulls, writeLocally), null, 2)}\n`
        : human(outcome, pulls, writeLocally),
    );
    return EXIT.ok;
  },
};
