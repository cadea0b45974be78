// `topo site`: every experiment record (experiments/*.json) into a static site for GitHub Pages.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseRecord } from '../../record/validate.js';
import { renderSite } from '../../site/pages.js';
import type { ExperimentRecord } from '../../types/generated/record.js';
import { flag, parseOptions, str } from '../args.js';
import type { Command } from '../command.js';
import { ConfigError, EXIT, UsageError } from '../errors.js';
import { JSON_OPTION } from './options.js';

/** The records of a folder: every `<id>.json` (reports and Markdown are derived from them). */
export function readRecords(dir: string): ExperimentRecord[] {
  if (!existsSync(dir)) throw new ConfigError(`${dir} does not exist: no experiment records to publish`);
  const records: ExperimentRecord[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    try {
      records.push(parseRecord(readFileSync(file, 'utf8'), file));
    } catch (error) {
      throw new ConfigError((error as Error).message);
    }
  }
  return records;
}

export const siteCommand: Command = {
  name: 'site',
  summary: 'Render every experiment record into a static site (GitHub Pages)',
  help: {
    synopsis: 'topo site [options]',
    description:
      'Writes an index of the experiments, one page per experiment (progress chart with intervals, best so far, the candidates), one per candidate (its record entry) and the final report, as static HTML with inline SVG and no script. .github/workflows/pages.yml publishes it when a record commit lands. Exit 2 when a record is invalid.',
    options: [
      {
        name: 'records',
        short: 'r',
        type: 'string',
        value: 'DIR',
        description: 'folder of the experiment records',
        default: 'experiments',
      },
      {
        name: 'out',
        short: 'o',
        type: 'string',
        value: 'DIR',
        description: 'output folder (created; files are overwritten)',
        default: 'site',
      },
      JSON_OPTION,
    ],
    examples: ['topo site', 'topo site --records experiments --out /tmp/site'],
  },
  async run(args, io) {
    const parsed = parseOptions(siteCommand.help.options, args, io.env);
    if (parsed.positionals.length) throw new UsageError(`unexpected argument ${parsed.positionals[0]}`);
    const records = readRecords(resolve(io.cwd, str(parsed, 'records') ?? 'experiments'));
    const out = resolve(io.cwd, str(parsed, 'out') ?? 'site');
    const pages = renderSite(records);
    for (const p of pages) {
      const file = join(out, p.path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, p.html);
    }
    // GitHub Pages serves the files as they are.
    writeFileSync(join(out, '.nojekyll'), '');
    const shown = relative(io.cwd, out) || out;
    io.stdout(
      flag(parsed, 'json')
        ? `${JSON.stringify({ schema_version: 1, out: shown, experiments: records.length, pages: pages.map((p) => p.path) })}\n`
        : `wrote ${pages.length} page(s) for ${records.length} experiment(s) to ${shown}/index.html\n`,
    );
    return EXIT.ok;
  },
};
