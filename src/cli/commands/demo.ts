import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAutopilotDemo } from '../../demo/autopilot.js';
import { LocalGitHubMissing, realAutopilotParts } from '../../demo/autopilot-parts.js';
import { Cleanup, onTermination } from '../../demo/cleanup.js';
import { LiveView } from '../../demo/live-view.js';
import { DemoOutput, findPackageRoot, mermaidScriptPath } from '../../demo/output.js';
import { realDemoParts } from '../../demo/parts.js';
import { chromiumNote, type DemoResult, runDemo } from '../../demo/run.js';
import { DEMO_MODES, dateStamp, SAMPLE_COMMAND } from '../../demo/sample.js';
import { flag, type OptionSpec, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, UsageError } from '../errors.js';
import { JSON_OPTION } from './options.js';

interface DemoArgs {
  quick: boolean;
  autopilot: boolean;
  json: boolean;
  out: string;
  command: string;
}

const DEMO_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'quick',
    short: 'q',
    type: 'boolean',
    description: 'one round of suggestions instead of two (under 3 minutes)',
  },
  {
    name: 'autopilot',
    short: 'a',
    type: 'boolean',
    description:
      'the autopilot: the experiment runs its own rounds on the local GitHub API to a merged winner, no command typed (needs npm ci: the API checks every request against GitHub’s descriptions)',
  },
  {
    name: 'out',
    short: 'o',
    type: 'string',
    value: 'DIR',
    description: 'output folder: candidates, PR comments, record, report, index.html',
    default: 'demo-out',
  },
  {
    name: 'command',
    short: 'c',
    type: 'string',
    value: '"<run command>"',
    description: 'the AlpaSim run command to start from',
    default: 'a sample on the twin',
  },
  {
    ...JSON_OPTION,
    description:
      'print one JSON document at the end (schemas/cli/demo.schema.json); the live progress goes to stderr',
  },
];

export function parseDemoArgs(args: string[]): DemoArgs {
  const parsed = parseOptions(DEMO_OPTIONS, args);
  if (parsed.positionals.length) throw new UsageError(`unexpected argument "${parsed.positionals[0]}"`);
  return {
    quick: flag(parsed, 'quick'),
    autopilot: flag(parsed, 'autopilot'),
    json: flag(parsed, 'json'),
    out: str(parsed, 'out') ?? 'demo-out',
    command: str(parsed, 'command') ?? SAMPLE_COMMAND,
  };
}

function demoJson(result: DemoResult, out: string) {
  return {
    schema_version: 1,
    ok: result.exitCode === 0,
    experiment_id: result.experimentId,
    out,
    index: `${out}/index.html`,
    wall_seconds: Math.round(result.wallSeconds),
    candidates: result.outcomes.length,
    files: result.files,
  };
}

/** The demo `parsed` asks for: the autopilot's over the local GitHub, or the monitor's rounds. */
function runChosenDemo(
  parsed: DemoArgs,
  root: string,
  env: NodeJS.ProcessEnv,
  run: { view: LiveView; output: DemoOutput; cleanup: Cleanup; signal: AbortSignal },
): Promise<DemoResult> {
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const { view, output, cleanup, signal } = run;
  if (parsed.autopilot)
    return runAutopilotDemo(
      {
        command: parsed.command,
        quick: parsed.quick,
        pollSeconds: 2,
        dateStamp: dateStamp(new Date()),
        isRoot,
        mermaidScript: mermaidScriptPath(root),
        maxWallSeconds: 540,
      },
      {
        parts: realAutopilotParts(root, env, mkdtempSync(join(tmpdir(), 'topo-demo-autopilot-'))),
        log: (line) => view.log(line),
        output,
        cleanup,
        signal,
      },
    );
  const mode = parsed.quick ? DEMO_MODES.quick : DEMO_MODES.full;
  return runDemo(
    {
      command: parsed.command,
      rounds: mode.rounds,
      perRound: mode.perRound,
      maxSimulatedMinutes: mode.maxSimulatedMinutes,
      pollSeconds: 2,
      dateStamp: dateStamp(new Date()),
      isRoot,
      mermaidScript: mermaidScriptPath(root),
    },
    { parts: realDemoParts(root, env, output.dir), view, output, cleanup, signal },
  );
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run the whole loop on a local Slurm with the AlpaSim twin',
  help: {
    synopsis: 'topo demo [options]',
    description:
      'Brings up the local Slurm cluster with fake GPUs and Prometheus (installing Debian packages as root), runs the baseline and suggested candidates on the AlpaSim twin, writes the record and the report, and stops everything it started (also on Ctrl-C).',
    options: DEMO_OPTIONS,
    examples: [
      'topo demo --quick',
      'topo demo --autopilot',
      'topo demo --autopilot --quick',
      'topo demo --out /tmp/demo',
    ],
  },
  async run(args, io) {
    const parsed = parseDemoArgs(args);
    const root = findPackageRoot();
    const output = new DemoOutput(parsed.out.startsWith('/') ? parsed.out : `${io.cwd}/${parsed.out}`);
    // under --json stdout holds only the document: the progress is a diagnostic then
    const view = new LiveView(parsed.json ? io.stderr : io.stdout, parsed.json ? false : io.isTTY);
    const cleanup = new Cleanup();
    const abort = new AbortController();
    const uninstall = onTermination(
      (signal) => abort.abort(signal),
      (signal) => {
        const left = cleanup.pending();
        io.stderr(
          `topo demo: ${signal} again, exiting now${left.length ? `; left to do by hand: ${left.join('; ')}` : ''}\n`,
        );
        process.exit(signal === 'SIGINT' ? 130 : 143);
      },
    );
    try {
      const result = await runChosenDemo(parsed, root, io.env, {
        view,
        output,
        cleanup,
        signal: abort.signal,
      });
      if (parsed.json) io.stdout(`${JSON.stringify(demoJson(result, output.dir))}\n`);
      else if (result.exitCode === 0) {
        io.stdout(
          `\ndone in ${result.wallSeconds.toFixed(0)} s${parsed.autopilot ? '' : `: ${result.outcomes.length} candidates judged`}\n` +
            `open ${output.dir}/index.html\n`,
        );
      }
      const chromium = chromiumNote(existsSync);
      if (chromium) io.stderr(`topo demo: ${chromium}\n`);
      return result.exitCode;
    } catch (error) {
      if (error instanceof LocalGitHubMissing) throw new ConfigError(error.message);
      throw error;
    } finally {
      uninstall();
    }
  },
};
