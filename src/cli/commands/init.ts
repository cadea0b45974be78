import { relative, resolve } from 'node:path';
import { initExperiment } from '../../topology/init.js';
import { RunCommandError } from '../../topology/run-command.js';
import { writeInitialRecord } from '../../usecases/record.js';
import { parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';

export const initCommand: Command = {
  name: 'init',
  summary: 'Start an experiment from a full AlpaSim run command (experiment.yaml + baseline.yaml)',
  usage:
    'topo init --command "<full run command>" [--dir topologies] [--date YYYYMMDD] [--cluster NAME] [--force]',
  async run(args, io) {
    const parsed = parseArgs(args, ['force'], ['command', 'dir', 'date', 'cluster']);
    if (parsed.positional.length)
      throw new UsageError(
        `unexpected argument ${parsed.positional[0]} (quote the run command after --command)`,
      );
    const command = parsed.values.get('command');
    if (!command)
      throw new UsageError(
        '--command "<full run command>" is required (the sbatch …/submit.sh deploy=… topology=… driver=… line)',
      );
    const date = parsed.values.get('date');
    if (date !== undefined && !/^[0-9]{8}$/.test(date)) throw new UsageError(`--date ${date}: use YYYYMMDD`);
    const dir = resolve(io.cwd, parsed.values.get('dir') ?? 'topologies');
    try {
      const written = initExperiment(command, dir, {
        ...(date ? { date } : {}),
        ...(parsed.values.get('cluster') ? { cluster: parsed.values.get('cluster') } : {}),
        force: parsed.flags.has('force'),
      });
      const rel = (p: string) => relative(io.cwd, p) || p;
      io.stdout(
        `created experiment ${written.experiment.experiment_id}\n  ${rel(written.experimentFile)}\n  ${rel(written.baselineFile)}\n`,
      );
      // The experiment record starts with the experiment (experiments/<id>.json and .md).
      for (const path of writeInitialRecord(resolve(dir, '..'), written.experiment))
        io.stdout(`  ${rel(path)}\n`);
      for (const note of written.notes) io.stdout(`note: ${note}\n`);
      io.stdout(`next: topo validate ${rel(written.experimentDir)}\n`);
      return 0;
    } catch (error) {
      if (error instanceof RunCommandError) {
        io.stderr(`topo init: ${error.message}\n`);
        return 1;
      }
      throw error;
    }
  },
};
