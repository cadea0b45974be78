// Recording a candidate without GitHub (`topo record`, `topo watch`): what merging or closing its
// pull request does, on the checkout's experiments/<id>.json and .md. The same pure apply(record,
// outcome), the same best rule (src/record) and the same checks as the record workflow
// (./record.ts): a run that failed is recorded failed whatever was asked, an entry another pull
// request (or another run) recorded is never rewritten, and only a candidate that ran is recorded.
import { apply, type OutcomeKind, type RecordOutcome } from '../record/apply.js';
import { recordFiles } from '../record/files.js';
import { createRecord, type ExperimentRecord, type RecordRun, recordPaths } from '../record/model.js';
import { applyReferenceRun, type ReferenceJobSeen, referenceRunEntry } from '../record/reference-runs.js';
import { parseRecord } from '../record/validate.js';
import type { Candidate } from '../types/generated/candidate.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { CandidateObservation } from '../types/generated/metrics.js';
import type { SkillReflection } from '../types/generated/record.js';
import { outcomeKind } from './record.js';

/** The run being recorded: its Slurm job and the judge's observation of it (with its Decision). */
export interface LocalRun {
  runName: string;
  jobId: string | null;
  runDir?: string | null;
  observation?: CandidateObservation | null;
}

export interface LocalRecordInput {
  experiment: Experiment;
  cluster?: Cluster;
  /** The checkout's experiments/<id>.json as it is (null: none yet). */
  recordText: string | null;
  /** The candidate file as checked, its path, its topology hash and its change from its parent. */
  candidate: Candidate;
  file: string;
  hash: string;
  change: Record<string, string>;
  run: LocalRun;
  /** What a person asked: accept (merge) or reject (close). */
  accept: boolean;
  reason?: string | null;
  learnings?: SkillReflection[];
  /** Gaps found while reading the run (metrics unavailable, a run cut short). */
  gaps?: string[];
  /** When it was recorded (ISO 8601): the record reads no clock. */
  at: string;
}

export type LocalRecordResult =
  | { kind: OutcomeKind; record: ExperimentRecord; files: Record<string, string>; unchanged: boolean }
  | { refused: string };

/** The record after this candidate's outcome, or why it is refused. Pure. */
export function recordLocally(input: LocalRecordInput): LocalRecordResult {
  const { experiment, candidate, run } = input;
  const paths = recordPaths(experiment.experiment_id);
  const record =
    input.recordText === null
      ? createRecord(experiment, input.cluster)
      : parseRecord(input.recordText, paths.json);
  const refused = refusal(record, candidate.name, run.runName);
  if (refused) return { refused };
  // the same run recorded again keeps when it was first recorded (the workflow's: the close time)
  const earlier = record.runs.find((r) => r.name === candidate.name && r.run_name === run.runName);
  const outcome = outcomeOf({ ...input, at: earlier?.recorded_at ?? input.at });
  const next = apply(record, outcome);
  const files = recordFiles(next);
  const unchanged = input.recordText !== null && files[paths.json] === input.recordText;
  return { kind: outcome.kind, record: next, files, unchanged };
}

/**
 * Why the record keeps its entry for `name` instead (./record.ts recordedElsewhere for a pull
 * request): an entry of a pull request, or of another run, is never rewritten; a pending one (from
 * `topo init`) or one of this very run is.
 */
export function refusal(record: ExperimentRecord, name: string, runName: string): string | null {
  const run: RecordRun | undefined = record.runs.find((r) => r.name === name);
  if (!run || (run.status === 'pending' && !run.pull_request)) return null;
  const from = run.pull_request
    ? `pull request #${run.pull_request.number}`
    : `run \`${run.run_name ?? 'unknown'}\``;
  if (!run.pull_request && run.run_name === runName) return null;
  return `\`${name}\` is already in the record from ${from} (${run.status}); an entry is never rewritten by another run, so run \`${runName}\` is not recorded. A changed or repeated topology needs a name of its own: a new file, with \`parent: ${name}\`.`;
}

function outcomeOf(input: LocalRecordInput): RecordOutcome {
  const { experiment, candidate, run } = input;
  const observation = run.observation ?? undefined;
  const kind = outcomeKind(input.accept, observation, undefined);
  const gaps = [...(input.gaps ?? [])];
  if (!observation) gaps.push('metrics unavailable: no series of the run in Prometheus');
  return {
    candidate: candidate.name,
    kind,
    at: input.at,
    parent: candidate.parent ?? null,
    run_name: observation?.run_name ?? run.runName,
    job_id: run.jobId,
    ...(run.runDir ? { run_dir: run.runDir } : {}),
    topology: {
      base: `topology=${experiment.base_topology}`,
      hash: input.hash,
      block: candidate.topology ?? null,
      file: input.file,
    },
    change: input.change,
    hypothesis: candidate.hypothesis,
    expected_effect: candidate.expected_effect,
    prediction: candidate.prediction,
    observation: observation ?? null,
    reason: kind === 'accepted' ? undefined : (input.reason ?? undefined),
    learnings: input.learnings ?? [],
    telemetry_gaps: gaps,
    pull_request: null,
  };
}

/**
 * The record with a reference job of a round (`topo watch`'s, as the record workflow records a closed
 * pull request's): keyed by its run name, so recording it twice changes nothing. Pure.
 */
export function recordReferenceLocally(input: {
  experiment: Experiment;
  cluster?: Cluster;
  recordText: string | null;
  seen: ReferenceJobSeen;
}): { record: ExperimentRecord; files: Record<string, string>; unchanged: boolean } {
  const paths = recordPaths(input.experiment.experiment_id);
  const before =
    input.recordText === null
      ? createRecord(input.experiment, input.cluster)
      : parseRecord(input.recordText, paths.json);
  const held = before.reference_runs?.find((r) => r.run_name === input.seen.runName);
  // recorded again: the first recording's time stays (the entry is otherwise the same run's)
  const entry = referenceRunEntry({ ...input.seen, at: held?.recorded_at ?? input.seen.at });
  const record = applyReferenceRun(before, entry);
  const files = recordFiles(record);
  return { record, files, unchanged: files[paths.json] === input.recordText };
}
