// The monitor's ports, all in one file: what a pass reads and writes through (the pull requests
// and Requests, Slurm, Prometheus, GitHub, the bot's run state) and the shapes it reads them as.
// Adapters over src/slurm and src/github are in ./adapters.ts; the action's, over the pass's one
// snapshot of the pull requests, in actions/monitor/ports.ts.
import type { BetweenRun } from '../analysis/decision.js';
import type { BotPull } from '../autopilot/pulls.js';
import type { PilotState } from '../autopilot/state.js';
import type { LabelState } from '../github/labels.js';
import type { RecordedReference } from '../judge/decide.js';
import type { RunJob } from '../judge/job.js';
import type { Outcome, RunRecord, RunRequest } from '../lifecycle/model.js';
import type { ReferenceSource } from '../lifecycle/reference.js';
import type { PrometheusClient } from '../telemetry/prometheus.js';
import type { Experiment } from '../types/generated/experiment.js';
import type { Topology } from '../types/generated/topology.js';
import type { AutopilotContext } from '../usecases/autopilot.js';

export type { LabelState };

/** One candidate of an experiment, as the pass reads it (from a Request, or from the demo). */
export interface MonitorCandidate {
  candidate: string;
  runName: string;
  pr: number;
  headSha: string;
  labels: string[];
  topology?: Topology;
  /** The user asked for it to run (submit command or queued label): queued while it has no job. */
  requested: boolean;
  /** When it was asked to run (ms since the epoch), for first come, first served; unknown sorts last. */
  requestedAt?: number;
  /**
   * The bot-owned Request this candidate runs for (src/lifecycle). With it, the lifecycle decides:
   * `requested` is ignored, a push supersedes, a forgotten job is `lost` (never resubmitted).
   */
  request?: RunRequest;
  run?: RunRecord;
  outcome?: Outcome;
  /** The pull request's current head (differs from request.headSha after a push). */
  currentHeadSha?: string;
  /** `reference`: the round's reference job (its Request's role), a run of the current best beside the candidates. */
  role?: 'reference';
}

/** One experiment of the default branch with its candidates and recorded references. */
export interface MonitorExperiment {
  experiment: Experiment;
  /** 1 for real AlpaSim; the twin's compression factor. */
  timeScale: number;
  /** Prometheus scrape interval of the cluster, seconds (5 in production, 1 locally). */
  scrapeSeconds?: number;
  grafanaUrl?: string | null;
  /** The experiment cluster's Prometheus; the ports' default when absent. */
  prometheus?: PrometheusClient;
  /** The record's references (with the recorded run's verdict when the record carries it). */
  baseline?: RecordedReference | null;
  best?: RecordedReference | null;
  /**
   * What a reference job beside the candidates runs (`reference: beside`): the record's best, else its
   * baseline, with its file on the default branch and its topology's hash. Absent: no job is made.
   */
  referenceSource?: ReferenceSource | null;
  /** The between-run term of the recorded reference, from the record's repeated runs (null: assumed). */
  betweenRun?: BetweenRun | null;
  /** GPUs a job of the experiment holds (the cluster's gpus_per_node); else the experiment's, the topology's. */
  gpusPerNode?: number;
  /** URL of the experiment's committed record chart (experiments/<id>.svg), linked from the comments. */
  recordChartUrl?: string | null;
  candidates: MonitorCandidate[];
}

/** A Slurm job as the monitor needs it: the one job model (src/judge/job.ts). */
export type MonitorJob = RunJob;

/** The pull request's check run on one head commit, over all its candidates at that commit. */
export interface MonitorCheck {
  title: string;
  summary: string;
  conclusion?: 'success' | 'failure' | 'neutral';
}

export interface MonitorPorts {
  /** The default branch's experiments with their candidates (the pull requests' Requests) and records. */
  experiments(): Promise<MonitorExperiment[]>;
  slurm: {
    /**
     * Every job of the experiment (live and recent), one call: only those Slurm's record says are the
     * tool's (src/lifecycle/jobs.ts isOwnedRun): `recorded`, the job ids the pass's Run records name,
     * decides for a job whose comment names no Request (absent: such a job is taken by its name).
     */
    jobs(experimentId: string, recorded?: ReadonlySet<string>): Promise<MonitorJob[]>;
    /**
     * The jobs the experiment's last `jobs` listing left out although they carry one of its run
     * names (not the tool's: another Request's comment, or none and no Run record names them).
     */
    conflicts?(experimentId: string): MonitorJob[];
    /**
     * Where the experiment's last `jobs` listing read ended jobs from (src/slurm JobListing.accounting):
     * `off` means a requeued job's earlier allocations are unknown (squeue prints only the current one).
     */
    accounting?(experimentId: string): 'on' | 'off' | 'unreachable' | null;
    cancel(jobId: string, experimentId: string): Promise<void>;
    /**
     * What sacct said when the experiment's last `jobs` listing found accounting unreachable
     * (slurmdbd down: live jobs came from the controller alone); null when it answered or the
     * cluster has none.
     */
    accountingProblem?(experimentId: string): string | null;
  };
  /**
   * Submits a queued candidate (idempotent by job name: the Slurm engineer's queue function).
   * `refused`: its Request no longer passes at its turn (the ports wrote the refusal): this pass
   * leaves the candidate out. Undefined: not submitted now (no slot, an error), tried next pass.
   */
  submit(
    experiment: MonitorExperiment,
    candidate: MonitorCandidate,
  ): Promise<{ jobId: string } | { refused: true } | undefined>;
  prometheus: PrometheusClient;
  github: {
    /** Candidate `candidate`'s sticky comment (src/github/monitor-comment.ts): one per candidate. */
    readComment(pr: number, candidate: string): Promise<string | undefined>;
    writeComment(pr: number, candidate: string, body: string): Promise<void>;
    /** The pull request's check run on `headSha`, over all its candidates at that commit. */
    writeCheck(pr: number, headSha: string, check: MonitorCheck): Promise<void>;
    /** The pull request's state label, from all its candidates. */
    setLabel(pr: number, state: LabelState | null, current: string[]): Promise<boolean>;
  };
  /** Where Runs and Outcomes are remembered (the pull request's bot-owned run state). */
  lifecycle?: {
    recordRun(pr: number, requestId: string, run: RunRecord): Promise<void>;
    recordOutcome(pr: number, requestId: string, outcome: Outcome): Promise<void>;
    /**
     * Makes the round's reference Request in pull request `pr` at `headSha` (the bot's, with a label
     * of its own: src/lifecycle/reference.ts) and returns it; null when the state cannot hold it.
     */
    requestReference?(experiment: MonitorExperiment, pr: number, headSha: string): Promise<RunRequest | null>;
  };
  /** The autopilot's GitHub side (stage `autopilot`); without it the stage does nothing. */
  autopilot?: AutopilotPort;
  /** Unix seconds. */
  now(): number;
}

/** What the autopilot stage reads of one experiment: its policy and record, bot pulls, its own state. */
export interface AutopilotView {
  context: AutopilotContext;
  pulls: BotPull[];
  /** The bot's checked state, with the dashboard's new commands applied (and answered) by read. */
  state: PilotState;
  /** The candidates people's open pull requests add or change in the experiment's folder (never proposed). */
  others?: Array<{ pr: number; candidate: string }>;
  /** The login the bot's own Requests carry: a person's `/topo submit` on a bot pull request is theirs. */
  botLogin: string;
}

/** One proposal of `topo suggest` as a bot pull request opens it. */
export interface BotProposal {
  candidate: string;
  /** The candidate file, repository-relative, and its text: the pull request's only change. */
  path: string;
  text: string;
  /** The bottleneck it answers, expected effect and predicted GPU memory (suggest's pull body). */
  reasoning: string;
  /** suggest's change (what the model's outlook names); absent for the baseline's. */
  change?: string;
}

/**
 * suggest's answer as the autopilot plans a round over it (src/campaign/loop.ts Suggestion): the
 * proposals, none named in the exclusions; its stop advice; the calibrated model's predicted best move.
 */
export interface Proposed {
  proposals: BotProposal[];
  stop: { stop: boolean; reason: string };
  outlook: { change: string; gainLow: number } | null;
}

/** What a required check stands at on a commit: its latest run's conclusion, null while it runs. */
export type CheckConclusions = Record<string, string | null>;

/**
 * The autopilot's writes, each keyed by the bot branch so a pass run twice repeats nothing. A write
 * GitHub refuses throws with its HTTP status: the stage shows it on the dashboard with what to do.
 */
export interface AutopilotPort {
  /** Null: the experiment has no autopilot block on the default branch. */
  read(experiment: MonitorExperiment): Promise<AutopilotView | null>;
  /** Up to `count` proposals, none named in `exclude`; round 0: the experiment's baseline (its starting topology). */
  propose(
    experiment: MonitorExperiment,
    count: number,
    exclude: readonly string[],
    round: number,
  ): Promise<Proposed>;
  /**
   * The bot's commit of one proposal on top of the default branch, no branch pointing at it yet: its
   * message holds the pull request's title and body, so a later pass can open it from the commit alone.
   */
  commit(
    experiment: MonitorExperiment,
    proposal: BotProposal & { round: number; title: string; body: string },
  ): Promise<string>;
  /**
   * Branch `topo/autopilot/<experiment>/<candidate>` at the bot's commit, then its pull request; an
   * existing branch is the lock (null: its pull request was closed before, never opened again).
   */
  open(
    experiment: MonitorExperiment,
    candidate: string,
    sha: string,
  ): Promise<{ pr: number; created: boolean } | null>;
  /** Posts the `topo/validate` check on a bot pull request's head (GITHUB_TOKEN starts no validate workflow). */
  validate(experiment: MonitorExperiment, pr: number): Promise<void>;
  /**
   * The Request of a bot pull request, as a person's `/topo submit` makes it (validated on the default
   * branch); null when made (or one stands), else why none can be made and what a person can do.
   */
  request(experiment: MonitorExperiment, pull: BotPull): Promise<{ why: string; fix: string } | null>;
  /** Closes a decided pull request with its decision; the record keeps it as a closed candidate. */
  close(experiment: MonitorExperiment, pr: number, comment: string): Promise<void>;
  /** Adds a label to a pull request. */
  label(experiment: MonitorExperiment, pr: number, name: string): Promise<void>;
  /** The latest conclusion of each check run on a commit, by name. */
  checks(experiment: MonitorExperiment, sha: string): Promise<CheckConclusions>;
  /** Merges a pull request at `sha` (refused if its head moved) and records it (GITHUB_TOKEN starts no record workflow). */
  merge(experiment: MonitorExperiment, pr: number, sha: string): Promise<void>;
  /** The final report, rendered from the default branch's record, committed and posted on the dashboard. */
  report(experiment: MonitorExperiment): Promise<void>;
  /** Changes the bot's state (compare-and-swap); returns it as written. */
  save(experiment: MonitorExperiment, change: (state: PilotState) => PilotState): Promise<PilotState>;
  /** Writes the dashboard issue (created once, found by its marker); closed once the loop is closed, open otherwise. */
  dashboard(experiment: MonitorExperiment, body: string, closed: boolean): Promise<void>;
}
