// What a `/topo` command is (Atlantis `server/events`: a command is parsed apart from its execution
// and has one runner): its name, the argument it takes, who may give it, whether the record reads it
// back when the pull request closes, where it is given (a pull request, or an autopilot experiment's
// dashboard issue) and its runner. Each command is one file of this folder exporting one such value;
// `registry.ts` lists them, `parse.ts` is the one parser, `route.ts` answers a pull request's comment
// and `dashboard.ts` folds a dashboard's comments into the autopilot's state.
import type { PilotState } from '../autopilot/state.js';
import type { Octokit } from '../github/client.js';
import type { SlurmClient } from '../slurm/types.js';
import type { Cluster } from '../types/generated/clusters.js';
import type { CandidateSource } from '../usecases/prepare.js';
import type { CommentFacts } from '../usecases/record.js';

/**
 * What a command takes after its name: nothing; at most one candidate name; a text (required, the
 * help's hint names it); or one fixed word (required, or optional like `pause --now`).
 */
export type ArgumentRule =
  | { kind: 'none' }
  | { kind: 'candidate' }
  | { kind: 'text'; hint: string }
  | { kind: 'word'; word: string; optional: boolean };

interface CommandBase {
  name: string;
  argument: ArgumentRule;
  /** `write`: write, maintain or admin access, and not a fork's pull request; `anyone`: only reads. */
  permission: 'anyone' | 'write';
  /**
   * What the record reads back from the comment when the pull request closes (reject, learn): the
   * facts with this command's argument added; false for every other command.
   */
  recordedAtClose: false | RecordedAtClose;
  /** One line of the help. */
  summary: string;
}

/** A command on a pull request. */
export interface PullCommand extends CommandBase {
  where: 'pull';
  /** Also taken on a closed pull request (the report; the state's rebuild before the record runs again). */
  onClosed?: boolean;
  run(ctx: CommandContext): Promise<HandlerResult>;
}

/** A control on an autopilot experiment's dashboard issue: a pure change of the bot's own state. */
export interface DashboardCommand extends CommandBase {
  where: 'dashboard';
  /** The state after `by`'s command, and the reply's text (`done: false`: not done, the state unchanged). */
  run(
    state: PilotState,
    by: string,
    argument: string | undefined,
  ): { state: PilotState; text: string; done: boolean };
}

export type Command = PullCommand | DashboardCommand;

/** Adds one accepted comment's command to what the record reads at close. */
export type RecordedAtClose = (
  facts: CommentFacts,
  argument: string,
  comment: { url: string; login: string },
) => CommentFacts;
export type Where = Command['where'];

/**
 * What a command's runner reports: a Markdown message for the reply. `ok: false` is a refusal the
 * user can act on (the candidate does not validate, nothing to cancel…): 😕 and the reason, the
 * step stays green. A thrown error is a failure of the system: 😕, the message, the step fails.
 */
export interface HandlerResult {
  ok: boolean;
  message: string;
}

/** What a candidate's status is, as a monitor pass reports it (src/monitor/report.ts CandidateReport). */
export interface StatusOfCandidate {
  candidate: string;
  runName: string;
  state: string;
}

/** The world a pull request's command acts on, built once by the submit action (its `main.ts`). */
export interface CommandPorts {
  /** The default branch's checkout (experiment.yaml, presets, clusters.yaml, the records). */
  source: CandidateSource;
  /** Runs `use` with a Slurm client of the cluster (clusters.yaml's `clusterName`), always closed afterwards. */
  withSlurm<T>(clusterName: string, cluster: Cluster, use: (slurm: SlurmClient) => Promise<T>): Promise<T>;
  /** One monitor pass limited to pull request `pr` (its comments written now); what it reports. */
  refresh(octokit: Octokit, pr: number): Promise<{ candidates: StatusOfCandidate[]; errors: string[] }>;
  now(): Date;
  log(line: string): void;
}

/** A command's pull request, who asked, and the ports. */
export interface CommandContext {
  octokit: Octokit;
  owner: string;
  repo: string;
  pullNumber: number;
  /** Head commit of the pull request: candidates are read there, as data, through the API. */
  headSha: string;
  headRef: string;
  baseRef: string;
  defaultBranch: string;
  /** Who asked (the commenter). */
  actor: string;
  botLogin: string;
  /** What follows the command's name, as its rule takes it. */
  argument?: string;
  ports: CommandPorts;
  /** The registry the command was routed by (the help lists it). */
  commands: readonly Command[];
}
