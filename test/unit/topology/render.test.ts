// Golden files: test/fixtures/topology/golden/<name>.json holds {argv, shellLine, jobName}.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSystemSource } from '../../../src/cli/commands/validate.js';
import { expandCandidate, expandPreset } from '../../../src/topology/expand.js';
import { SBATCH_EXPORT_FLAG } from '../../../src/topology/job-environment.js';
import { RenderError, renderSubmission, shellQuote } from '../../../src/topology/render.js';
import type { Cluster } from '../../../src/types/generated/clusters.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import type { Topology } from '../../../src/types/generated/topology.js';
import { renderCandidateFile } from '../../../src/usecases/validate.js';
import { CORPUS_EXPERIMENT, corpusSource, REPO, withRepoPresets } from './helpers.js';

const GOLDEN = join(REPO, 'test/fixtures/topology/golden');

function golden(name: string, actual: unknown): void {
  const file = join(GOLDEN, `${name}.json`);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(file, text);
  }
  expect(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(text).toBe(readFileSync(file, 'utf8'));
}

describe('render golden files', () => {
  const example = 'topologies/topology-opt-vavam-ord-20261202';
  it.each(['baseline', 'renderer-split', 'more-workers'])('example experiment: %s', async (name) => {
    const files = fileSystemSource(REPO);
    const out = await renderCandidateFile(`${example}/${name}.yaml`, { files });
    expect(out.report.errors).toEqual([]);
    golden(`example-${name}`, out.submission);
  });

  it.each(['baseline', 'good-split', 'warn-capacity-imbalance'])('corpus experiment: %s', async (name) => {
    const files = corpusSource();
    const out = await renderCandidateFile(`${CORPUS_EXPERIMENT}/${name}.yaml`, {
      files,
      config: withRepoPresets(files),
      clustersFile: 'clusters.yaml',
    });
    golden(`corpus-${name}`, out.submission);
  });
});

const preset: Topology = {
  defines: { nre_cache_size: 5 },
  services: {
    renderer: { gpus: [0], replicas_per_container: 1 },
    controller: { gpus: null, replicas_per_container: 1 },
  },
  runtime: {
    nr_workers: 1,
    endpoints: { renderer: { n_concurrent_rollouts: 4 }, controller: { n_concurrent_rollouts: 4 } },
  },
};
const experiment: Experiment = {
  experiment_id: 'topology-opt-vavam-local-20260101',
  cluster: 'local',
  base_topology: '1gpu',
  fixed_inputs: {
    deploy: 'twin-balanced',
    driver: 'vavam',
    overrides: ['+chunking=8frame', 'wizard.description=5Hz test run'],
  },
};
const cluster: Cluster = {
  transport: 'local',
  alpasim_checkout: '/repo',
  submit_script: 'scripts/alpasim-twin/submit.sh',
  run_dir: 'runs',
  file_sd: '/state/file-sd',
  prometheus_url: 'http://127.0.0.1:9093',
  gpus_per_node: 8,
  gpu_memory_gib: 80,
  cpus_per_node: 4,
  slurm: { exclusive: false },
};
const base = expandPreset(preset, experiment);
const resolved = (topology: Topology) => ({ name: 'c1', base, expanded: expandCandidate(base, topology) });

describe('renderSubmission', () => {
  it('follows the argv contract: options, script, groups, fixed overrides, topology diff, run name', () => {
    const s = renderSubmission(
      experiment,
      resolved({ services: { renderer: { gpus: [0, 0, 1, 1] } } }),
      cluster,
    );
    expect(s.jobName).toMatch(/^topo-topology-opt-vavam-local-20260101-c1-[0-9a-f]{8}$/);
    expect(s.argv).toEqual([
      'sbatch',
      '--parsable',
      SBATCH_EXPORT_FLAG,
      `--job-name=${s.jobName}`,
      '--nodes=1',
      '--gpus-per-node=8',
      '--time=03:59:00',
      // Issue 14.9: submit.sh copies runs/slurm_output/<job id>.log into the run's txt-logs/.
      '--output=/repo/runs/slurm_output/%j.log',
      '/repo/scripts/alpasim-twin/submit.sh',
      'deploy=twin-balanced',
      'topology=1gpu',
      'driver=vavam',
      '+chunking=8frame',
      'wizard.description=5Hz test run',
      'services.renderer.gpus=[0,0,1,1]',
      `wizard.run_name=${s.jobName}`,
    ]);
    expect(s.shellLine).toContain("'services.renderer.gpus=[0,0,1,1]'");
  });

  it('emits --exclusive by default and null as null', () => {
    const { exclusive: _, ...slurm } = cluster.slurm;
    const s = renderSubmission(experiment, resolved({ services: { renderer: { gpus: null } } }), {
      ...cluster,
      slurm,
    });
    expect(s.argv).toContain('--exclusive');
    expect(s.argv).toContain('services.renderer.gpus=null');
  });

  it('gives the same job name for the same expanded topology, whatever the key order', () => {
    const a = renderSubmission(
      experiment,
      resolved({ runtime: { nr_workers: 2 }, defines: { nre_cache_size: 6 } }),
      cluster,
    );
    const b = renderSubmission(
      experiment,
      resolved({ defines: { nre_cache_size: 6 }, runtime: { nr_workers: 2 } }),
      cluster,
    );
    expect(a.jobName).toBe(b.jobName);
    const c = renderSubmission(experiment, resolved({ runtime: { nr_workers: 3 } }), cluster);
    expect(c.jobName).not.toBe(a.jobName);
  });

  it.each([
    [
      'an account with a shell metacharacter',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, slurm: { account: 'a;b' } } },
      cluster,
    ],
    [
      'a driver with a space',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, driver: 'va vam' } },
      cluster,
    ],
    [
      'an override with $()',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, overrides: ['a=$(id)'] } },
      cluster,
    ],
    [
      'an override setting the run name',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, overrides: ['wizard.run_name=x'] } },
      cluster,
    ],
    [
      'an override setting a topology key',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, overrides: ['runtime.nr_workers=3'] } },
      cluster,
    ],
    ['a relative checkout', experiment, { ...cluster, alpasim_checkout: 'repo' }],
    ['a script path starting with a dash', experiment, { ...cluster, submit_script: '-x.sh' }],
    [
      'a bad time',
      { ...experiment, fixed_inputs: { ...experiment.fixed_inputs, slurm: { time: '1 hour' } } },
      cluster,
    ],
    ['a bad experiment id', { ...experiment, experiment_id: 'x; rm' }, cluster],
  ] as Array<[string, Experiment, Cluster]>)('refuses %s with a clear error', (_what, exp, cl) => {
    expect(() => renderSubmission(exp, resolved({}), cl)).toThrow(RenderError);
    expect(() => renderSubmission(exp, resolved({}), cl)).toThrow(/refusing to render/);
  });

  it('refuses a candidate name or topology value that slipped past the schema', () => {
    expect(() => renderSubmission(experiment, { ...resolved({}), name: 'Bad name' }, cluster)).toThrow(
      RenderError,
    );
    const bad = resolved({});
    (bad.expanded.runtime as { nr_workers: unknown }).nr_workers = '1 && reboot';
    expect(() => renderSubmission(experiment, bad, cluster)).toThrow(RenderError);
  });

  it('shellQuote quotes only what a shell would interpret', () => {
    expect(shellQuote('--time=01:00:00')).toBe('--time=01:00:00');
    expect(shellQuote('a=[0,1]')).toBe("'a=[0,1]'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });
});
