import { formatIssue } from '../../topology/issues.js';
import { shellQuote } from '../../topology/render.js';
import { renderCandidateFile } from '../../usecases/validate.js';
import { parseArgs } from '../args.js';
import { type Command, UsageError } from '../command.js';
import { validateOptionsFor } from './validate.js';

export const renderCommand: Command = {
  name: 'render',
  summary: "Print a candidate's sbatch command (argv) without submitting it",
  usage: 'topo render [--json] [--cluster NAME] [--clusters <clusters.yaml>] <candidate.yaml>',
  async run(args, io) {
    const parsed = parseArgs(args, ['json'], ['cluster', 'clusters']);
    if (parsed.positional.length !== 1) throw new UsageError('name exactly one candidate file');
    const path = parsed.positional[0] as string;
    const options = validateOptionsFor(io, parsed.values.get('clusters'), parsed.values.get('cluster'));
    const { report, submission } = await renderCandidateFile(path, options);
    for (const issue of [...report.errors, ...report.warnings]) io.stderr(`${formatIssue(issue)}\n`);
    if (!submission) {
      io.stderr(
        report.kind !== 'candidate'
          ? `${path} is a ${report.kind} file, not a candidate\n`
          : `${path}: not rendered: fix the ${report.errors.length} error(s) above first\n`,
      );
      return 1;
    }
    if (parsed.flags.has('json')) io.stdout(`${JSON.stringify(submission.argv)}\n`);
    else {
      // submit.sh's variables travel in the job's environment (Submission.env), not in the argv.
      const env = Object.entries(submission.env ?? {}).map(([k, v]) => shellQuote(`${k}=${v}`));
      io.stdout(
        `# job ${submission.jobName}\n${env.length ? `# environment: ${env.join(' ')}\n` : ''}${submission.shellLine}\n`,
      );
    }
    return 0;
  },
};
