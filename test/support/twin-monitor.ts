// The monitor's pass on an action testbed's real parts (the local Slurm, Prometheus and GitHub API),
// each submission the twin's job: what the monitor integration tests share, so a test is its
// experiment, its roles and its assertions.
import { createOctokit } from '../../src/github/client.js';
import type { Outcome, RunRecord, RunRequest } from '../../src/lifecycle/model.js';
import { githubMonitorPort, slurmMonitorPort } from '../../src/monitor/adapters.js';
import type { MonitorCandidate, MonitorExperiment, MonitorPorts } from '../../src/monitor/ports.js';
import { parseOverrides } from '../../src/sim/overrides.js';
import { createPrometheusClient } from '../../src/telemetry/prometheus.js';
import { type ActionTestbed, submitTwinJob } from './action-fixture.js';
import { repoRoot } from './cluster.js';

/**
 * The ports of a pass over `experiment()` (read anew at each pass): Slurm, Prometheus and GitHub of
 * the testbed; a submission runs the twin with `overrides(candidate)`; the clock is the machine's.
 */
export function twinMonitorPorts(
  t: ActionTestbed,
  experiment: () => MonitorExperiment,
  overrides: (candidate: string) => readonly string[],
  lifecycle?: MonitorPorts['lifecycle'],
): MonitorPorts {
  const { gh, cluster, slurm } = t;
  const octokit = createOctokit({ token: gh.token, baseUrl: gh.url });
  return {
    experiments: async () => [experiment()],
    slurm: slurmMonitorPort(slurm),
    submit: async (_exp, c) => ({ jobId: await submitTwinJob(t, c.runName, overrides(c.candidate)) }),
    prometheus: createPrometheusClient({ baseUrl: cluster.prometheusUrl, timeoutMs: 5000 }),
    github: githubMonitorPort(octokit, { owner: 'acme', repo: 'sim', botLogin: gh.botLogin }),
    ...(lifecycle ? { lifecycle } : {}),
    now: () => Date.now() / 1000,
  };
}

export interface TwinRoles<Role extends string> {
  readonly roles: readonly Role[];
  /** The Runs and Outcomes the passes recorded, by Request id (the first of each kept, as the bot's state does). */
  readonly runs: Map<string, RunRecord>;
  readonly outcomes: Map<string, Outcome>;
  /** The twin's overrides of a role: its preset, 8 rollouts per scene (no run ends inside a test). */
  overrides(role: Role): string[];
  /** The bot's Request of a role, on the testbed's pull request of the same name. */
  request(role: Role): RunRequest;
  /** The ports of a pass: every role a requested candidate with what earlier passes recorded. */
  ports(): MonitorPorts;
}

/**
 * An experiment of twin presets on the testbed (max_parallel 3, the 8gpu_12rollouts base): each
 * role a pull request (opened by the testbed under the role's name) with a bot Request for its
 * preset. The lifecycle is kept in memory, so a later pass reads the Runs and Outcomes as the
 * bot's state would give them.
 */
export function twinRoles<Role extends string>(
  t: ActionTestbed,
  presets: Readonly<Record<Role, string>>,
): TwinRoles<Role> {
  const roles = Object.keys(presets) as Role[];
  const runs = new Map<string, RunRecord>();
  const outcomes = new Map<string, Outcome>();
  const overrides = (role: Role) => [
    'deploy=twin-balanced',
    `topology=${presets[role]}`,
    'driver=vavam',
    'runtime.simulation_config.n_rollouts=8',
  ];
  const request = (role: Role): RunRequest => {
    const pr = t.pull(role).number;
    const id = `0000000${pr}`;
    return {
      id,
      experiment: t.experimentId,
      candidate: role,
      path: `topologies/${t.experimentId}/${role}.yaml`,
      pr,
      headSha: t.pull(role).head.sha,
      topologyHash: '0123abcd',
      runName: `topo-${t.experimentId}-${role}-0123abcd-${id}`,
      login: 'alice',
      requestedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, pr)).toISOString(),
    };
  };
  const candidate = (role: Role): MonitorCandidate => {
    const pull = t.pull(role);
    const r = request(role);
    return {
      candidate: role,
      runName: r.runName,
      pr: pull.number,
      headSha: pull.head.sha,
      currentHeadSha: pull.head.sha,
      labels: [...pull.labels],
      topology: parseOverrides(overrides(role), { repoRoot, gpusPerNode: 8 }).topology,
      requested: false,
      request: r,
      ...(runs.has(r.id) ? { run: runs.get(r.id) } : {}),
      ...(outcomes.has(r.id) ? { outcome: outcomes.get(r.id) } : {}),
    };
  };
  const experiment = (): MonitorExperiment => ({
    experiment: {
      experiment_id: t.experimentId,
      cluster: 'local',
      base_topology: '8gpu_12rollouts',
      max_parallel: 3,
      // stop_when_decided and min_improvement: the schema's defaults (true, 0.02)
      fixed_inputs: { deploy: 'twin-balanced', driver: 'vavam', slurm: { time: '04:00:00' } },
    },
    timeScale: t.cluster.timeScale,
    scrapeSeconds: 1,
    // each job asks for the whole node (--gpus-per-node=8), whatever its topology uses
    gpusPerNode: 8,
    candidates: roles.map(candidate),
  });
  return {
    roles,
    runs,
    outcomes,
    overrides,
    request,
    ports: () =>
      twinMonitorPorts(t, experiment, (c) => overrides(c as Role), {
        recordRun: async (_pr, id, run) => void (runs.has(id) || runs.set(id, run)),
        recordOutcome: async (_pr, id, outcome) => void (outcomes.has(id) || outcomes.set(id, outcome)),
      }),
  };
}
