// A throw-away repository tree with one experiment (base preset 8gpu_64rollouts on the twin's
// hardware profile) and a record whose runs were "measured" by the twin's model.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { apply } from '../../../src/record/apply.js';
import { createRecord, recordPaths } from '../../../src/record/model.js';
import { serializeRecord } from '../../../src/record/validate.js';
import { loadProfile } from '../../../src/sim/profile.js';
import { expandCandidate, expandPreset, hash8 } from '../../../src/topology/expand.js';
import type { Cluster } from '../../../src/types/generated/clusters.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { requireCluster } from '../../support/cluster.js';
import { measure } from './twin-observation.js';

const REPO = new URL('../../../', import.meta.url).pathname;

export const EXPERIMENT_ID = 'topology-opt-vam-local-20261202';

export function experimentFor(deploy: string): Experiment {
  return {
    experiment_id: EXPERIMENT_ID,
    objective: 'minimize stabilized full-run seconds_per_rollout',
    cluster: 'local',
    base_topology: '8gpu_64rollouts',
    max_parallel: 3,
    fixed_inputs: { deploy, driver: 'vam', scenes: 'public_2601', rollouts_per_scene: 1 },
  };
}

export const CLUSTER: Cluster = {
  transport: 'local',
  alpasim_checkout: '/opt/alpasim',
  submit_script: 'scripts/alpasim-twin/submit.sh',
  file_sd: '/tmp/file-sd',
  // the cluster these tests run against, whatever its ports (a private cluster's too)
  prometheus_url: requireCluster().prometheusUrl,
  gpus_per_node: 8,
  gpu_memory_gib: 80,
  cpus_per_node: 64,
  slurm: {},
  time_scale: 60,
  memory_model: {
    per_replica_gib: { renderer: 10, driver: 5, physics: 2, controller: 0, trafficsim: 6 },
    per_cached_scene_gib: { renderer: 2, physics: 0.5 },
    per_gpu_overhead_gib: 1,
  },
};

export function basePreset(): Topology {
  return parse(readFileSync(join(REPO, 'topologies/presets/8gpu_64rollouts.yaml'), 'utf8')) as Topology;
}

export interface ExperimentRepo {
  dir: string;
  experiment: Experiment;
  base: Topology;
  record: ExperimentRecord;
  /** Adds a measured run (accepted or rejected) to the record and writes it. */
  addRun(
    name: string,
    parent: string | null,
    block: Topology,
    kind: 'accepted' | 'rejected',
    against?: { name: string; seconds: number },
  ): number | undefined;
  /** Every file of the tree as text, for seeding the local GitHub API. */
  files(): Record<string, string>;
}

export function createExperimentRepo(deploy = 'twin-driver-bound'): ExperimentRepo {
  const dir = mkdtempSync(join(tmpdir(), 'topo-suggest-'));
  cpSync(join(REPO, 'topologies/presets'), join(dir, 'topologies/presets'), { recursive: true });
  writeFileSync(join(dir, 'topologies/clusters.yaml'), stringify({ clusters: { local: CLUSTER } }));
  const experiment = experimentFor(deploy);
  const expDir = join(dir, 'topologies', EXPERIMENT_ID);
  mkdirSync(expDir, { recursive: true });
  writeFileSync(join(expDir, 'experiment.yaml'), stringify(experiment));
  const base = expandPreset(basePreset(), experiment);
  const profile = loadProfile(deploy, REPO);
  mkdirSync(join(dir, 'experiments'), { recursive: true });
  const repo: ExperimentRepo = {
    dir,
    experiment,
    base,
    record: createRecord(experiment, CLUSTER),
    addRun(name, parent, block, kind, against) {
      const expanded = expandCandidate(base, block);
      const m = measure(expanded, profile, against);
      const hash = hash8(expanded);
      writeFileSync(join(expDir, `${name}.yaml`), stringify({ name, parent, topology: block }));
      repo.record = apply(repo.record, {
        candidate: name,
        kind: m.oom ? 'failed' : kind,
        parent,
        run_name: `topo-${EXPERIMENT_ID}-${name}-${hash}`,
        topology: { base: '8gpu_64rollouts', hash, block, file: `topologies/${EXPERIMENT_ID}/${name}.yaml` },
        observation: m.oom
          ? null
          : {
              run_name: `topo-${EXPERIMENT_ID}-${name}-${hash}`,
              verdict: m.observation.verdict!,
              stable_metrics: m.observation.stable_metrics!,
              ...(m.observation.decision ? { decision: m.observation.decision } : {}),
            },
        ...(m.observation.failure ? { failure: m.observation.failure } : {}),
      });
      writeFileSync(join(dir, recordPaths(EXPERIMENT_ID).json), serializeRecord(repo.record));
      return m.seconds;
    },
    files() {
      const out: Record<string, string> = {};
      const walk = (rel: string) => {
        for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
          const child = rel ? `${rel}/${entry.name}` : entry.name;
          if (entry.isDirectory()) walk(child);
          else out[child] = readFileSync(join(dir, child), 'utf8');
        }
      };
      walk('');
      return out;
    },
  };
  return repo;
}
