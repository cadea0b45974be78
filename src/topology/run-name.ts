// The Run's name: Slurm job name AND wizard.run_name (the Prometheus `run_name` label) of ONE
// submission: `topo-<experiment>-<candidate>-<hash8>-<label>`, the label unique per submission so a
// rerun never shares a run_name (and its metrics) with an earlier run. Parsed exactly: a name
// belongs to an experiment only when the rest after `topo-<experiment>-` is a candidate name, the
// topology hash and the label, and to the LONGEST such experiment id (so `<A>-b-<date>`'s jobs are
// never A's). Every run-name pattern of the project lives here (held by
// test/unit/build/structure.test.ts): render checks a job name, the telemetry a selector's name and
// the bot's state a stored name against the shapes below.
import { randomBytes } from 'node:crypto';

const CANDIDATE = '[a-z0-9][a-z0-9-]{0,39}';
const HEX8 = '[0-9a-f]{8}';
const LABELLED = new RegExp(`^(${CANDIDATE})-(${HEX8})-(${HEX8})$`);
const UNLABELLED = new RegExp(`^(${CANDIDATE})-(${HEX8})$`);
/** A run label (its Request's id): 8 hex digits, the same shape as a topology's hash8. */
export const RUN_LABEL = new RegExp(`^${HEX8}$`);
/** A topology's hash8, the part of a run name that names what it ran. */
export const TOPOLOGY_HASH8 = RUN_LABEL;
/** A candidate name, the part of a run name after the experiment id. */
export const CANDIDATE_NAME = new RegExp(`^${CANDIDATE}$`);
/**
 * A run name's shape, checked before a name reaches an argv, a PromQL selector or the bot's state:
 * `topo-`, safe characters, and 8 hex digits at the end (the hash8, or the label after it). Which
 * experiment and candidate it names is parseRunName's question.
 */
export const RUN_NAME = new RegExp(`^topo-[a-z0-9_.-]{1,200}-${HEX8}$`);

export interface ParsedRunName {
  experimentId: string;
  candidate: string;
  /** hash8 of the expanded topology. */
  hash: string;
  /** The submission's label; null for a job submitted before labels existed. */
  label: string | null;
}

/** A fresh label: 8 hex digits, random (32 bits; names also differ by candidate and hash). */
export function newRunLabel(bytes: (n: number) => Buffer = randomBytes): string {
  return bytes(4).toString('hex');
}

/**
 * What submission writes into the job (`sbatch --comment`): the Request's id (its run label), so
 * Slurm's own record says which Request a job is the run of (invariant 21: a name is not an owner).
 */
export function requestComment(label: string): string {
  if (!RUN_LABEL.test(label)) throw new Error(`run label ${JSON.stringify(label)} is not 8 hex digits`);
  return `${REQUEST_COMMENT}${label}`;
}
const REQUEST_COMMENT = 'topo:';

/** The Request id a job's comment names; null when it names none (no comment, or other text). */
export function requestIdOfComment(comment: string | null | undefined): string | null {
  const id = comment?.startsWith(REQUEST_COMMENT) ? comment.slice(REQUEST_COMMENT.length).trim() : null;
  return id !== null && RUN_LABEL.test(id) ? id : null;
}

/** `topo-<experiment>-<candidate>-<hash8>` (render's jobName) + `-<label>`. */
export function runNameFor(candidateJobName: string, label: string): string {
  if (!RUN_LABEL.test(label)) throw new Error(`run label ${JSON.stringify(label)} is not 8 hex digits`);
  return `${candidateJobName}-${label}`;
}

/** The parts of `name` read as a run of `experimentId`, or null when it is not one. */
export function parseRunName(name: string, experimentId: string): ParsedRunName | null {
  const prefix = `topo-${experimentId}-`;
  if (!name.startsWith(prefix)) return null;
  const rest = name.slice(prefix.length);
  const labelled = LABELLED.exec(rest);
  if (labelled)
    return {
      experimentId,
      candidate: labelled[1] as string,
      hash: labelled[2] as string,
      label: labelled[3] as string,
    };
  const plain = UNLABELLED.exec(rest);
  if (plain) return { experimentId, candidate: plain[1] as string, hash: plain[2] as string, label: null };
  return null;
}

/**
 * The candidate of a run name when its experiment is not known: experiment ids are
 * `topology-opt-…-<YYYYMMDD>` (experiment.schema.json), so the date ends the longest id that parses.
 */
export function candidateOfRunName(name: string): string | null {
  return parseUnknownRunName(name)?.candidate ?? null;
}

/** The experiment id of a run name when its experiment is not known (see candidateOfRunName); '' when none. */
export function experimentIdOfRun(name: string): string {
  return parseUnknownRunName(name)?.experimentId ?? '';
}

function parseUnknownRunName(name: string): ParsedRunName | null {
  const m = new RegExp(`^topo-(topology-opt-.*-[0-9]{8})-${CANDIDATE}-${HEX8}(?:-${HEX8})?$`).exec(name);
  return m ? parseRunName(name, m[1] as string) : null;
}

/** The experiment (of `experimentIds`) a job name belongs to: the longest id it parses under. */
export function ownerExperiment(name: string, experimentIds: Iterable<string>): string | null {
  let best: string | null = null;
  for (const id of experimentIds)
    if (parseRunName(name, id) && (best === null || id.length > best.length)) best = id;
  return best;
}

/**
 * Whether a job name is one of `experimentId`'s runs, given every experiment id the caller knows
 * (the experiment itself included): parsed exactly, and not a run of a longer id.
 */
export function isRunOf(name: string, experimentId: string, knownIds: Iterable<string> = []): boolean {
  if (!parseRunName(name, experimentId) || looksLikeLongerExperiment(name, experimentId)) return false;
  return ownerExperiment(name, [experimentId, ...knownIds]) === experimentId;
}

/**
 * Whether a job name could belong to an experiment whose id extends `experimentId`
 * (`topo-<experimentId>-<more>-<8 digits>-…`): such a name is never counted as this experiment's,
 * even when the longer experiment is not known here (another repository on the same account).
 */
export function looksLikeLongerExperiment(name: string, experimentId: string): boolean {
  const parsed = parseRunName(name, experimentId);
  if (!parsed) return false;
  // Experiment ids end in `-<word>-<YYYYMMDD>`: a candidate part that starts with such a tail is
  // read as the rest of a longer id (validate refuses such candidate names: rule `reserved-name`).
  return /^([a-z0-9]+-)+[0-9]{8}-[a-z0-9]/.test(parsed.candidate);
}
