import { Cleanup, onTermination } from '../../demo/cleanup.js';
import { LiveView } from '../../demo/live-view.js';
import { DemoOutput, findPackageRoot, mermaidScriptPath } from '../../demo/output.js';
import { realDemoParts } from '../../demo/parts.js';
import { DEMO_MODES, dateStamp, SAMPLE_COMMAND } from '../../demo/sample.js';
import { runDemo } from '../../usecases/demo.js';
import { type Command, UsageError } from '../command.js';

interface DemoArgs {
  quick: boolean;
  out: string;
  command: string;
}

export function parseDemoArgs(args: string[]): DemoArgs {
  const parsed: DemoArgs = { quick: false, out: 'demo-out', command: SAMPLE_COMMAND };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--quick') parsed.quick = true;
    else if (arg === '--out' || arg === '--command') {
      const value = args[++i];
      if (!value || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
      if (arg === '--out') parsed.out = value;
      else parsed.command = value;
    } else if (arg.startsWith('--out=')) parsed.out = arg.slice('--out='.length);
    else if (arg.startsWith('--command=')) parsed.command = arg.slice('--command='.length);
    else throw new UsageError(`unknown option "${arg}"`);
  }
  if (!parsed.out) throw new UsageError('--out needs a folder');
  return parsed;
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'Run the whole loop on a local Slurm with the AlpaSim twin',
  usage:
    'topo demo [--quick] [--out DIR] [--command "<full AlpaSim run command>"]\n' +
    '  --quick    one round of suggestions instead of two (under 3 minutes)\n' +
    '  --out DIR  output folder (default ./demo-out): candidates, PR comments, record, report, index.html\n' +
    '  --command  the AlpaSim run command to start from (default: a sample on the twin)',
  async run(args, io) {
    const parsed = parseDemoArgs(args);
    const root = findPackageRoot();
    const output = new DemoOutput(parsed.out.startsWith('/') ? parsed.out : `${io.cwd}/${parsed.out}`);
    const view = new LiveView(io.stdout, io.isTTY);
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
    const mode = parsed.quick ? DEMO_MODES.quick : DEMO_MODES.full;
    try {
      const result = await runDemo(
        {
          command: parsed.command,
          rounds: mode.rounds,
          perRound: mode.perRound,
          maxSimulatedMinutes: mode.maxSimulatedMinutes,
          pollSeconds: 2,
          dateStamp: dateStamp(new Date()),
          isRoot: typeof process.getuid === 'function' && process.getuid() === 0,
          mermaidScript: mermaidScriptPath(root),
        },
        { parts: realDemoParts(root, io.env, output.dir), view, output, cleanup, signal: abort.signal },
      );
      if (result.exitCode === 0) {
        io.stdout(
          `\ndone in ${result.wallSeconds.toFixed(0)} s: ${result.outcomes.length} candidates judged\n` +
            `open ${output.dir}/index.html\n`,
        );
      }
      return result.exitCode;
    } finally {
      uninstall();
    }
  },
};
