import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { recordPaths } from '../../record/model.js';
import { parseRecord } from '../../record/validate.js';
import { renderFinalReport } from '../../report/final-report.js';
import { flag, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { JSON_OPTION } from './options.js';

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
  help: {
    synopsis: 'topo report <experiment-id | experiments/<id>.json> [options]',
    description:
      "The final report of an experiment (the seed's five parts) from its record, as Markdown on stdout or into a file. Exit 2 when the record does not exist.",
    options: [
      {
        name: 'out',
        short: 'o',
        type: 'string',
        value: 'FILE',
        description: 'write the report here',
        default: 'stdout',
      },
      {
        name: 'record-url',
        type: 'string',
        value: 'URL',
        description: 'link to the record in the report',
        default: 'none',
      },
      JSON_OPTION,
    ],
    examples: [
      'topo report topology-opt-vavam-ord-20261202',
      'topo report experiments/topology-opt-vavam-ord-20261202.json --out report.md',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(reportCommand.help.options, args, io.env);
    const [target, extra] = parsed.positionals;
    const out = str(parsed, 'out');
    const recordUrl = str(parsed, 'record-url');
    if (extra) throw new UsageError(`one experiment at a time (got "${target}" and "${extra}")`);
    if (!target) throw new UsageError('which experiment? give its id or its record file');
    const file = recordFile(target, io.cwd);
    const shown = relative(io.cwd, file) || file;
    if (!existsSync(file))
      throw new ConfigError(
        `${shown} does not exist (records are written when candidate pull requests close, or by topo init)`,
      );
    const record = parseRecord(readFileSync(file, 'utf8'), shown);
    const report = renderFinalReport(record, { recordUrl });
    if (out) writeFileSync(isAbsolute(out) ? out : join(io.cwd, out), report);
    // what it wrote is the result (stdout), as for setup, init and site
    if (flag(parsed, 'json'))
      io.stdout(
        `${JSON.stringify({ schema_version: 1, experiment_id: record.experiment_id, out: out ?? null, markdown: report })}\n`,
      );
    else io.stdout(out ? `wrote the final report of ${record.experiment_id} to ${out}\n` : report);
    return EXIT.ok;
  },
};
