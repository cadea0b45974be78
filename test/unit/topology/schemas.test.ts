import { describe, expect, it } from 'vitest';
import { checkCandidate, checkClusters } from '../../../src/topology/files.js';
import { didYouMean, editDistance, pointerToPath } from '../../../src/topology/schemas.js';

describe('schema errors mapped to lines', () => {
  it('collects every error (allErrors) with line, column, key path and a helpful message', () => {
    const text = [
      'name: c1',
      'parent: baseline',
      'topology:',
      '  services:',
      '    driver:',
      '      gpus: [4, -5]',
      '      replicas: 2',
      '  runtime:',
      '    nr_workers: 2.5',
      '    endpoints:',
      '      physics:',
      '        n_concurrent_rollouts: "4"',
      '',
    ].join('\n');
    const { issues, value } = checkCandidate(text, 'c1.yaml');
    expect(value).toBeUndefined();
    const brief = issues.map((i) => [i.rule, i.line, i.column, i.keyPath]);
    expect(brief).toEqual(
      expect.arrayContaining([
        ['out-of-range', 6, 17, 'topology.services.driver.gpus[1]'],
        ['unknown-key', 7, 7, 'topology.services.driver.replicas'],
        ['not-integer', 9, 17, 'topology.runtime.nr_workers'],
        ['wrong-type', 12, 32, 'topology.runtime.endpoints.physics.n_concurrent_rollouts'],
      ]),
    );
    expect(issues).toHaveLength(4);
    const unknown = issues.find((i) => i.rule === 'unknown-key');
    expect(unknown?.message).toContain('did you mean `replicas_per_container`?');
    expect(issues.find((i) => i.rule === 'not-integer')?.message).toContain('use 2 or 3');
  });

  it('explains where a misplaced topology key belongs', () => {
    const { issues } = checkCandidate('name: c\ntopology:\n  runtime:\n    skip: true\n', 'c.yaml');
    expect(issues[0]?.message).toContain('`skip` belongs at `runtime.endpoints.<service>.skip`');
  });

  it('says a fixed input cannot be set by a candidate', () => {
    const { issues } = checkCandidate('name: c\ncameras: 4cam_1080\ntopology: {}\n', 'c.yaml');
    expect(issues[0]).toMatchObject({ rule: 'unknown-key', line: 2, column: 1 });
    expect(issues[0]?.message).toContain('fixed inputs stay as in experiment.yaml');
  });

  it('accepts a pasted AlpaSim preset (trafficsim.server and eval keys included)', () => {
    const { issues } = checkCandidate(
      'name: p\ntopology:\n  trafficsim:\n    server:\n      max_workers: 16\n  eval:\n    num_processes: 32\n',
      'p.yaml',
    );
    expect(issues).toEqual([]);
  });

  it('suggests enum values', () => {
    const text =
      'clusters:\n  a:\n    transport: lokal\n    alpasim_checkout: /x\n    submit_script: s.sh\n    file_sd: /f\n    prometheus_url: http://p\n    gpus_per_node: 8\n    gpu_memory_gib: 80\n    cpus_per_node: 8\n    slurm: {}\n';
    const { issues } = checkClusters(text, 'clusters.yaml');
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ rule: 'bad-value', line: 3, keyPath: 'clusters.a.transport' });
    expect(issues[0]?.message).toContain('did you mean "local"?');
  });
});

describe('helpers', () => {
  it('pointerToPath decodes JSON pointers', () => {
    expect(pointerToPath('/topology/services/driver/gpus/2')).toEqual([
      'topology',
      'services',
      'driver',
      'gpus',
      2,
    ]);
    expect(pointerToPath('/a~1b/c~0d')).toEqual(['a/b', 'c~d']);
    expect(pointerToPath('')).toEqual([]);
  });

  it('didYouMean finds close keys and refuses far ones', () => {
    expect(didYouMean('nre_cahce_size', ['nre_cache_size', 'physics_cache_size'])).toBe('nre_cache_size');
    expect(didYouMean('nreCacheSize', ['nre_cache_size'])).toBe('nre_cache_size');
    expect(didYouMean('banana', ['renderer', 'driver'])).toBeUndefined();
    expect(editDistance('ab', 'ba')).toBe(1);
  });
});
