import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { formatIssue } from '../../topology/issues.js';
import type { Submission } from '../../topology/render.js';
import { shellQuote } from '../../topology/render.js';
import { type FileReport, renderCandidateFile } from '../../usecases/validate.js';
import { flag, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, FindingError, UsageError } from '../errors.js';
import { ALLOW_UNMEASURED_MEMORY_OPTION, CLUSTER_OPTION, CLUSTERS_OPTION, JSON_OPTION } from './options.js';
import { validateOptionsFor } from './validate.js';

/**
 * The submission of a candidate that rendered; otherwise a finding (exit 1): its errors are the
 * result, on stdout (with --json in the error document), the reason on stderr. A rendered candidate's
 * warnings are diagnostics beside the result (stderr).
 */
export function renderedOrFinding(
  path: string,
  report: FileReport,
  submission: Submission | undefined,
  io: CliIO,
  json: boolean,
  verb: 'rendered' | 'submitted' | 'cancelled',
): Submission {
  if (submission && report.candidate) {
    for (const issue of report.warnings) io.stderr(`${formatIssue(issue)}\n`);
    return submission;
  }
  const issues = [...report.errors, ...report.warnings].map(formatIssue);
  if (!json) for (const line of issues) io.stdout(`${line}\n`);
  throw new FindingError(
    report.kind !== 'candidate'
      ? `${path} is a ${report.kind} file, not a candidate`
      : `${path}: not ${verb}: fix the ${report.errors.length} error(s) ${json ? 'in issues' : 'above'} first`,
    issues,
  );
}

export const renderCommand: Command = {
  name: 'render',
  summary: "Print a candidate's sbatch command (argv) without submitting it",
  help: {
    synopsis: 'topo render <candidate.yaml> [options]',
    description:
      'Prints the exact sbatch argv of a candidate and a shell-quoted line, without submitting. With --json: the argv (schemas/cli/render.schema.json). Exit 1 when the candidate has errors.',
    options: [JSON_OPTION, CLUSTER_OPTION, CLUSTERS_OPTION, ALLOW_UNMEASURED_MEMORY_OPTION],
    examples: [
      'topo render topologies/topology-opt-vavam-ord-20261202/baseline.yaml',
      'topo render --json --cluster ord topologies/<experiment>/<candidate>.yaml',
    ],
  },
  async run(args, io) {
    const parsed = parseOptions(renderCommand.help.options, args, io.env);
    if (parsed.positionals.length !== 1) throw new UsageError('name exactly one candidate file');
    const path = parsed.positionals[0] as string;
    if (!existsSync(resolve(io.cwd, path))) throw new ConfigError(`${path}: no such file`);
    const options = validateOptionsFor(
      io,
      str(parsed, 'clusters'),
      str(parsed, 'cluster'),
      flag(parsed, 'allow-unmeasured-memory'),
    );
    const { report, submission } = await renderCandidateFile(path, options);
    const rendered = renderedOrFinding(path, report, submission, io, flag(parsed, 'json'), 'rendered');
    if (flag(parsed, 'json'))
      io.stdout(
        `${JSON.stringify({ schema_version: 1, job_name: rendered.jobName, argv: rendered.argv, env: rendered.env ?? {} })}
`,
      );
    else {
      // submit.sh's variables travel in the job's environment (Submission.env), not in the argv.
      const env = Object.entries(rendered.env ?? {}).map(([k, v]) => shellQuote(`${k}=${v}`));
      io.stdout(
        `# job ${rendered.jobName}
${
  env.length
    ? `# environment: ${env.join(' ')}
`
    : ''
}${rendered.shellLine}
`,
      );
    }
    return EXIT.ok;
  },
};
