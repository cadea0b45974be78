import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { recordPaths } from '../../record/model.js';
import { parseRecord } from '../../record/validate.js';
import { renderFinalReport } from '../../report/final-report.js';
import { type Command, UsageError } from '../command.js';

/** `<experiment-id>` → experiments/<id>.json under cwd; a path to a .json record is taken as is. */
function recordFile(arg: string, cwd: string): string {
  if (arg.endsWith('.json')) return isAbsolute(arg) ? arg : join(cwd, arg);
  if (!/^[A-Za-z0-9_.-]{1,80}$/.test(arg))
    throw new UsageError(`"${arg}" is neither an experiment id nor a .json record`);
  return join(cwd, recordPaths(arg).json);
}

export const reportCommand: Command = {
  name: 'report',
  summary: 'Render the final report of an experiment',
  usage: 'topo report <experiment-id | experiments/<id>.json> [--out FILE] [--record-url URL]',
  async run(args, io) {
    let target: string | undefined;
    let out: string | undefined;
    let recordUrl: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg === '--out' || arg === '--record-url') {
        const value = args[++i];
        if (!value) throw new UsageError(`${arg} needs a value`);
        if (arg === '--out') out = value;
        else recordUrl = value;
      } else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
      else if (target) throw new UsageError(`one experiment at a time (got "${target}" and "${arg}")`);
      else target = arg;
    }
    if (!target) throw new UsageError('which experiment? give its id or its record file');
    const file = recordFile(target, io.cwd);
    const shown = relative(io.cwd, file) || file;
    if (!existsSync(file)) {
      io.stderr(
        `topo report: ${shown} does not exist (records are written when candidate pull requests close, or by topo init)\n`,
      );
      return 1;
    }
    const record = parseRecord(readFileSync(file, 'utf8'), shown);
    const report = renderFinalReport(record, { recordUrl });
    if (out) {
      writeFileSync(isAbsolute(out) ? out : join(io.cwd, out), report);
      io.stderr(`wrote the final report of ${record.experiment_id} to ${out}\n`);
    } else io.stdout(report);
    return 0;
  },
};
