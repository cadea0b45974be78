// A team's checkout for the CLI's end-to-end tests (issue 41): one experiment on the local cluster
// with the demo's driver-bound twin profile on AlpaSim's 8gpu_12rollouts, its baseline, a candidate
// the twin runs clearly faster (`model`, the demo's winner, about 18% faster) and one it runs slower
// (`scale-driver`, about 11% slower), and the record `topo init` writes. Runs last about two minutes
// of wall time (an hour and a half of run time at the twin's 60×).
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { recordFiles } from '../../../src/record/files.js';
import { createRecord } from '../../../src/record/model.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { type CliRun, runTopo } from '../../support/cli.js';
import { type LocalClusterEnv, repoRoot } from '../../support/cluster.js';
import { experimentId } from '../slurm/helpers.js';

const ENDPOINTS = (r: number, d: number, p: number, c: number) => ({
  renderer: { n_concurrent_rollouts: r, skip: false },
  driver: { n_concurrent_rollouts: d, skip: false },
  physics: { n_concurrent_rollouts: p, skip: false },
  controller: { n_concurrent_rollouts: c, skip: false },
  trafficsim: { n_concurrent_rollouts: 6, skip: true },
});
const SERVICES = (driverGpus: number[], driverReplicas: number) => ({
  renderer: { gpus: [0, 1, 2, 3], replicas_per_container: 1 },
  driver: { gpus: driverGpus, replicas_per_container: driverReplicas },
  physics: { gpus: [2, 3, 4, 5, 6, 7], replicas_per_container: 1 },
  controller: { gpus: null, replicas_per_container: 2 },
  trafficsim: { gpus: [0, 1], replicas_per_container: 1 },
});
const TOPOLOGIES = {
  baseline: {
    defines: { nre_cache_size: 16, physics_cache_size: 16 },
    services: SERVICES([4, 5, 6, 7], 1),
    runtime: { nr_workers: 1, endpoints: ENDPOINTS(3, 3, 2, 6) },
    trafficsim: { server: { max_workers: 6 } },
  },
  model: {
    defines: { nre_cache_size: 20, physics_cache_size: 22 },
    services: SERVICES([0, 4, 5, 6, 7], 2),
    runtime: { nr_workers: 1, endpoints: ENDPOINTS(4, 2, 3, 8) },
    trafficsim: { server: { max_workers: 6 } },
  },
  'scale-driver': {
    defines: { nre_cache_size: 16, physics_cache_size: 16 },
    services: SERVICES([0, 4, 5, 6, 7], 1),
    runtime: { nr_workers: 1, endpoints: ENDPOINTS(3, 3, 2, 6) },
    trafficsim: { server: { max_workers: 6 } },
  },
};

export interface Team {
  dir: string;
  id: string;
  experiment: Experiment;
  /** The candidate's file, relative to the checkout. */
  file(candidate: string): string;
}

export function teamExperiment(
  tag: string,
  options: { autopilot?: boolean /** the twin profile (default twin-driver-bound) */; deploy?: string } = {},
): Team {
  const dir = mkdtempSync(join(tmpdir(), `topo-team-${tag}-`));
  const id = experimentId(tag);
  const experiment: Experiment = {
    experiment_id: id,
    objective: 'minimize stabilized full-run seconds_per_rollout',
    cluster: 'local',
    base_topology: '8gpu_12rollouts',
    max_parallel: 3,
    fixed_inputs: {
      deploy: options.deploy ?? 'twin-driver-bound',
      driver: 'vavam',
      scenes: 'public_2601',
      rollouts_per_scene: 1,
      slurm: { partition: 'gpu', gpus_per_node: 8 },
    },
    ...(options.autopilot ? { autopilot: { enabled: true, gpu_hours: 100 } } : {}),
  } as Experiment;
  mkdirSync(join(dir, 'topologies', id), { recursive: true });
  cpSync(join(repoRoot, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
  writeFileSync(join(dir, 'topologies', id, 'experiment.yaml'), stringify(experiment));
  for (const [name, topology] of Object.entries(TOPOLOGIES))
    writeFileSync(
      join(dir, 'topologies', id, `${name}.yaml`),
      stringify({ name, parent: name === 'baseline' ? null : 'baseline', topology }),
    );
  // what `topo init` leaves: the record with the baseline pending
  const record = createRecord(experiment);
  record.runs = [
    { name: 'baseline', status: 'pending', decision: { outcome: 'pending', reason: null, next: null } },
  ];
  for (const [path, text] of Object.entries(recordFiles(record))) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return { dir, id, experiment, file: (c) => join('topologies', id, `${c}.yaml`) };
}

/** Waits (bounded) until `count` jobs of the experiment ended, as `topo jobs` lists them. */
export async function waitEnded(
  topo: (...args: string[]) => Promise<CliRun>,
  id: string,
  count: number,
  timeoutMs = 480_000,
): Promise<void> {
  const live = new Set(['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING']);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const jobs = JSON.parse((await topo('jobs', id, '--json')).stdout).jobs as { state: string }[];
    const ended = jobs.filter((j) => !live.has(j.state)).length;
    if (ended >= count) return;
    expect(Date.now(), `${ended} of ${count} jobs of ${id} ended`).toBeLessThan(until);
    await new Promise((r) => setTimeout(r, 5000));
  }
}

/** The environment a team's `topo` runs with on `cluster`: its clusters.yaml and its slurm.conf. */
export function teamEnv(
  cluster: Pick<LocalClusterEnv, 'clustersFile' | 'slurmConf'>,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TOPO_CLUSTERS_FILE: cluster.clustersFile,
    SLURM_CONF: cluster.slurmConf,
    ...extra,
  };
}

/** A job of the team's experiment as `topo jobs --json` lists it. */
export interface TeamJob {
  name: string;
  state: string;
  reason: string | null;
}

/** Every job of the team's experiment, as `topo jobs --json` lists it. */
export async function teamJobs(team: Team, env: NodeJS.ProcessEnv): Promise<TeamJob[]> {
  return JSON.parse((await runTopo(['jobs', team.id, '--json'], team.dir, env)).stdout).jobs as TeamJob[];
}
