// `topo record <experiment> <candidate> --accept|--reject`: what merging or closing a candidate's pull
// request does, for a team without GitHub. The candidate's run is read from Slurm and judged by the
// judge (src/judge, as `topo status` and the monitor judge it), then recorded in the checkout's
// experiments/<id>.json and .md by the record workflow's pure apply and best rule
// (src/usecases/record-local.ts). `suggest`, `report` and `autopilot status` read that record.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { RunJob } from '../../judge/job.js';
import type { Judgement } from '../../judge/judge.js';
import { slurmMonitorPort } from '../../monitor/adapters.js';
import { changeOf } from '../../record/change.js';
import { learningFromText } from '../../record/learnings.js';
import { recordPaths } from '../../record/model.js';
import { headlineLine } from '../../report/pr-comment.js';
import { standingOf } from '../../report/standing.js';
import { slurmClientForCluster } from '../../slurm/for-cluster.js';
import { isLive } from '../../slurm/types.js';
import { hash8 } from '../../topology/expand.js';
import { checkCandidate } from '../../topology/files.js';
import { suggest as didYouMean } from '../../topology/overrides.js';
import { parseRunName } from '../../topology/run-name.js';
import type { Experiment } from '../../types/generated/experiment.js';
import type { SkillReflection } from '../../types/generated/record.js';
import { type LocalRecordResult, recordLocally } from '../../usecases/record-local.js';
import { type CandidateDetails, renderCandidateFile } from '../../usecases/validate.js';
import { flag, type Parsed, parseOptions, str } from '../args.js';
import type { CliIO, Command } from '../command.js';
import { ConfigError, EXIT, FindingError, UsageError } from '../errors.js';
import { ensurePrometheus } from '../services.js';
import { TELEMETRY_OPTIONS, type TelemetryOptions, telemetryOptions, telemetryValues } from './analyze.js';
import { loadExperiment } from './experiments.js';
import { JSON_OPTION, TOPOLOGIES_OPTION } from './options.js';
import { type JudgedJob, judgeJobs } from './status.js';
import { validateOptionsFor } from './validate.js';

export const recordCommand: Command = {
  name: 'record',
  summary: "Record a candidate's run as accepted or rejected, as merging or closing its pull request does",
  help: {
    synopsis: 'topo record <experiment> <candidate> (--accept | --reject) [options]',
    description:
      "For a team without GitHub: records the candidate's run in experiments/<id>.json and .md of the checkout, as the record workflow does when its pull request is merged (--accept) or closed (--reject): the same validation, the same best rule, the run judged as `topo status` and the monitor judge it (its verdict, metrics and decision against the record's best or baseline, at its end). The run is the candidate's newest run of the topology its file describes (--run names another); a run still live is cancelled first, as closing a pull request cancels it. A run that failed is recorded failed. An entry another run or a pull request recorded is never rewritten (exit 1). `topo suggest`, `topo report` and `topo autopilot status` read the record. With --json: schemas/cli/record.schema.json.",
    options: [
      { name: 'accept', type: 'boolean', description: 'accept the run (what merging its pull request does)' },
      {
        name: 'reject',
        type: 'boolean',
        description: 'reject the run (what closing its pull request unmerged does)',
      },
      {
        name: 'reason',
        type: 'string',
        value: 'TEXT',
        description: 'why it is rejected (as `/topo reject <reason>`)',
        default: 'from the verdict and decision',
      },
      {
        name: 'learn',
        type: 'string',
        multiple: true,
        value: 'TEXT',
        description: 'a learning for the record (as `/topo learn`); may be given more than once',
      },
      {
        name: 'run',
        type: 'string',
        value: 'RUN_NAME',
        description: 'the run to record',
        default: "the candidate's newest run of its file's topology",
      },
      TOPOLOGIES_OPTION,
      ...TELEMETRY_OPTIONS,
      JSON_OPTION,
    ],
    examples: [
      'topo record topology-opt-vavam-ord-20261202 baseline --accept',
      'topo record topology-opt-vavam-ord-20261202 more-workers --reject --reason "renderer-bound"',
    ],
    environment: [{ name: 'TOPO_SSH_KEY', description: 'private key for clusters reached over SSH' }],
  },
  async run(args, io) {
    const parsed = parseOptions(recordCommand.help.options, args, io.env);
    const { id, name, accept } = recordArguments(parsed);
    const dir = str(parsed, 'topologies') ?? 'topologies';
    const experiment = loadExperiment(io, id, dir);
    const target = await candidateOf(io, parsed, experiment, dir, name);
    const t = telemetryOptions(telemetryValues(parsed), io, experiment.cluster);
    if (!t.cluster) throw new ConfigError(`cluster ${experiment.cluster} not found`);
    await ensurePrometheus(t.prometheus);
    const slurm = slurmClientForCluster(t.cluster.name, t.cluster.config, { env: io.env });
    try {
      const port = slurmMonitorPort(slurm);
      const run = await runToRecord(port, experiment, target, str(parsed, 'run'));
      const judged = await judgedRun(port, { experiment, id, t, cwd: io.cwd }, { ...run, candidate: name });
      const result = recordLocally({
        experiment,
        cluster: t.cluster.config,
        recordText: readRecord(io, id),
        candidate: target.candidate,
        file: target.file,
        hash: target.hash,
        change: changeOf(target.details.diff),
        run: { runName: run.job.name, jobId: run.job.jobId, observation: judged.judgement.observation },
        accept,
        reason: str(parsed, 'reason') ?? null,
        learnings: learnings(parsed, io),
        gaps: run.gaps,
        at: new Date().toISOString(),
      });
      if ('refused' in result) throw new FindingError(result.refused);
      return report(io, flag(parsed, 'json'), { id, name, experiment, result, judged, gaps: run.gaps });
    } finally {
      await slurm.close();
    }
  },
};

function recordArguments(parsed: Parsed): { id: string; name: string; accept: boolean } {
  const [id, name, extra] = parsed.positionals;
  if (!id || !name || extra) throw new UsageError('give the experiment id and the candidate name');
  const accept = flag(parsed, 'accept');
  if (accept === flag(parsed, 'reject')) throw new UsageError('give exactly one of --accept and --reject');
  return { id, name, accept };
}

/** The candidate file `<dir>/<experiment>/<name>.yaml`, checked and expanded as `topo validate` does. */
export async function candidateOf(
  io: CliIO,
  parsed: Parsed,
  experiment: Experiment,
  dir: string,
  name: string,
) {
  const folder = join(dir, experiment.experiment_id);
  const file = [`${name}.yaml`, `${name}.yml`]
    .map((f) => join(folder, f))
    .find((f) => existsSync(resolve(io.cwd, f)));
  if (!file) {
    const known = readdirSync(resolve(io.cwd, folder))
      .map((f) => /^([a-z0-9][a-z0-9-]*)\.ya?ml$/.exec(f)?.[1])
      .filter((c): c is string => !!c && c !== 'experiment');
    throw new ConfigError(`no candidate ${name} in ${folder}${didYouMean(name, known)}`);
  }
  const { report } = await renderCandidateFile(
    file,
    validateOptionsFor(io, str(parsed, 'clusters'), undefined, true),
  );
  const candidate = checkCandidate(readFileSync(resolve(io.cwd, file), 'utf8'), file).value;
  if (!report.candidate || !candidate || report.errors.length)
    throw new FindingError(
      `${file} has errors: fix them first (topo validate ${file})`,
      report.errors.map((e) => `${e.file}:${e.line}: ${e.message}`),
    );
  const details = report.candidate as CandidateDetails;
  // the run names' and the record's hash: its first 8 hex digits
  return { file, candidate, details, hash: hash8(details.expanded) };
}

type SlurmPort = ReturnType<typeof slurmMonitorPort>;

/**
 * The run to record: `--run`, else the candidate's newest run of its file's topology (a changed
 * file describes a topology its runs never measured: refused). A live run is cancelled first, as
 * closing a pull request cancels it, and recorded as cut short.
 */
async function runToRecord(
  port: SlurmPort,
  experiment: Experiment,
  target: { details: CandidateDetails; hash: string },
  wanted: string | undefined,
): Promise<{ job: RunJob; gaps: string[] }> {
  const { details, hash } = target;
  const id = experiment.experiment_id;
  const runs = (await port.jobs(id)).filter((j) => parseRunName(j.name, id)?.candidate === details.name);
  const names = [...new Set(runs.map((j) => j.name))];
  const same = runs.filter((j) => parseRunName(j.name, id)?.hash === hash);
  const job = wanted
    ? runs.filter((j) => j.name === wanted).at(-1)
    : same.sort((a, b) => Number(a.jobId) - Number(b.jobId)).at(-1);
  if (!job) throw new FindingError(noRun({ ...details, hash }, wanted, names, experiment.cluster));
  if (!isLive(job.status)) return { job, gaps: [] };
  await port.cancel(job.jobId, id);
  const ended = await endOf(port, id, job.name);
  return {
    job: ended,
    gaps: [`run cut short: Slurm job ${job.jobId} was still running when it was recorded; it was cancelled`],
  };
}

function noRun(
  details: CandidateDetails,
  wanted: string | undefined,
  names: string[],
  cluster: string,
): string {
  if (wanted)
    return `no run ${wanted} of ${details.name} on cluster ${cluster}${names.length ? ` (its runs: ${names.join(', ')})` : ''}`;
  if (names.length)
    return `${details.name}'s file describes topology ${details.hash}, which none of its runs measured (${names.join(', ')}): the record keeps what was measured. Record one of them with --run after restoring its file, or submit the changed topology under a new name (a new file with \`parent: ${details.name}\`)`;
  return `${details.name} never ran on cluster ${cluster}: topo submit it (and let topo watch decide it) before recording it`;
}

/** The job once it ended (COMPLETING lasts while its processes stop; bounded). */
async function endOf(port: SlurmPort, id: string, runName: string): Promise<RunJob> {
  for (let i = 0; ; i++) {
    const job = (await port.jobs(id)).filter((j) => j.name === runName).at(-1);
    if (!job) throw new FindingError(`Slurm lists no job of ${runName} after it was cancelled`);
    if (!isLive(job.status) || i >= 60) return job;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The run judged among the experiment's runs, as `topo status` judges them (at its end). */
async function judgedRun(
  port: SlurmPort,
  input: { experiment: Experiment; id: string; t: TelemetryOptions; cwd: string },
  run: { job: RunJob; candidate: string },
): Promise<JudgedJob> {
  const jobs = await port.jobs(input.id);
  const now = Math.floor(Date.now() / 1000);
  // against the references it was decided against: recorded again, a run is not its own reference
  const { judged } = await judgeJobs({ ...input, jobs, now, without: run.candidate });
  const mine = judged.find((j) => j.job.jobId === run.job.jobId);
  if (!mine) throw new FindingError(`Slurm no longer lists job ${run.job.jobId} of ${run.job.name}`);
  return mine;
}

export function readRecord(io: CliIO, id: string): string | null {
  const file = join(io.cwd, recordPaths(id).json);
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

/** The record's files (experiments/<id>.json, .md, .svg) written in the checkout. */
export function writeRecordFiles(io: CliIO, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    const file = join(io.cwd, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}

function learnings(parsed: Parsed, io: CliIO): SkillReflection[] {
  const texts = (parsed.values.learn as string[] | undefined) ?? [];
  const who = io.env.USER || io.env.LOGNAME || null;
  return texts.map((t) => learningFromText(t, null, who)).filter((l): l is SkillReflection => !!l);
}

/** The headline of the recorded decision, as the pull request comment's first line says it. */
export function judgementHeadline(name: string, experiment: Experiment, j: Judgement): string {
  const standing = standingOf({
    state: j.state ?? 'finished',
    failure: j.observation.failure ?? null,
    decision: j.decision,
    hasValue: !!j.observation.verdict.value,
    minImprovement: experiment.min_improvement,
    minutesOfData: j.observation.verdict.minutes_of_data ?? null,
  });
  return headlineLine(name, standing).replace(/`/g, '');
}

function report(
  io: CliIO,
  json: boolean,
  r: {
    id: string;
    name: string;
    experiment: Experiment;
    result: Exclude<LocalRecordResult, { refused: string }>;
    judged: JudgedJob;
    gaps: string[];
  },
): number {
  const paths = recordPaths(r.id);
  writeRecordFiles(io, r.result.files);
  const best = r.result.record.current_best;
  const run = r.result.record.runs.find((x) => x.name === r.name);
  if (json) {
    io.stdout(
      `${JSON.stringify({
        schema_version: 1,
        experiment_id: r.id,
        candidate: r.name,
        status: r.result.kind,
        run_name: run?.run_name ?? null,
        job_id: run?.job_id ?? null,
        decision: run?.monitor_decision ?? null,
        record: paths.json,
        changed: !r.result.unchanged,
        current_best: best,
        telemetry_gaps: r.gaps,
      })}\n`,
    );
    return EXIT.ok;
  }
  io.stdout(
    [
      `${r.result.unchanged ? 'Already recorded' : 'Recorded'} ${r.name} as ${r.result.kind} in ${paths.json} (run ${run?.run_name ?? '—'}, job ${run?.job_id ?? '—'})`,
      `  ${judgementHeadline(r.name, r.experiment, r.judged.judgement)}`,
      `  best: ${best.topology ?? 'none yet'}${best.decision_reasoning ? ` — ${best.decision_reasoning}` : ''}`,
      ...r.gaps.map((g) => `  gap: ${g}`),
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
