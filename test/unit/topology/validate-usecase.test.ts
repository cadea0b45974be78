// The use case as the validate action drives it: candidate files from the pull request head (here an
// in-memory tree), presets and clusters.yaml from the default branch (the repository's own files).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Issue } from '../../../src/topology/issues.js';
import {
  type FileSource,
  fileSystemSource,
  topologyFilesOf,
  validateFiles,
  validatePullRequest,
  validationSummary,
} from '../../../src/usecases/validate.js';
import { REPO } from './helpers.js';

const EXP = 'topologies/topology-opt-vavam-ord-20261202';

/** A commit as a map of path -> text. */
function memorySource(files: Record<string, string>): FileSource {
  return {
    async read(path) {
      return files[path];
    },
    async list(dir) {
      const names = Object.keys(files)
        .filter((p) => dirname(p) === dir)
        .map((p) => p.slice(dir.length + 1));
      return names.length ? names.sort() : undefined;
    },
  };
}

const repoFile = (p: string) => readFileSync(join(REPO, p), 'utf8');
const head = (extra: Record<string, string>) =>
  memorySource({
    [`${EXP}/experiment.yaml`]: repoFile(`${EXP}/experiment.yaml`),
    [`${EXP}/baseline.yaml`]: repoFile(`${EXP}/baseline.yaml`),
    [`${EXP}/renderer-split.yaml`]: repoFile(`${EXP}/renderer-split.yaml`),
    ...extra,
  });

function recorder() {
  const annotations: Issue[] = [];
  const summaries: string[] = [];
  const infos: string[] = [];
  return {
    annotations,
    summaries,
    infos,
    reporter: {
      annotate: (i: Issue) => annotations.push(i),
      summary: async (m: string) => void summaries.push(m),
      info: (m: string) => void infos.push(m),
    },
  };
}

describe('validatePullRequest', () => {
  it('picks the changed topology files only', () => {
    expect(
      topologyFilesOf([
        'README.md',
        'topologies/clusters.yaml',
        'topologies/schema/topology.schema.json',
        `${EXP}/new.yaml`,
        `${EXP}/notes.md`,
        'topologies/a/b/c.yaml',
        'src/x.yaml',
      ]),
    ).toEqual(['topologies/clusters.yaml', `${EXP}/new.yaml`]);
  });

  it('annotates errors at file:line, summarises each candidate and counts errors', async () => {
    const candidate = [
      'name: wider-driver',
      'parent: baseline',
      'hypothesis: driver is the bottleneck',
      'topology:',
      '  services:',
      '    driver:',
      '      gpus: [4, 5, 6, 7, 8]',
      '      replicas_per_container: 9',
      '',
    ].join('\n');
    const r = recorder();
    const report = await validatePullRequest(
      { changedPaths: [`${EXP}/wider-driver.yaml`, 'README.md'] },
      { files: head({ [`${EXP}/wider-driver.yaml`]: candidate }), config: fileSystemSource(REPO) },
      r.reporter,
    );
    expect(report.errorCount).toBeGreaterThan(0);
    const gpu = r.annotations.find((a) => a.rule === 'gpu-index');
    expect(gpu).toMatchObject({ file: `${EXP}/wider-driver.yaml`, line: 7, column: 26, severity: 'error' });
    expect(r.annotations.some((a) => a.rule === 'capacity-imbalance' && a.severity === 'warning')).toBe(true);
    const summary = r.summaries[0] as string;
    expect(summary).toContain('candidate `wider-driver`');
    expect(summary).toContain('| driver | 90 |');
    expect(summary).toContain('| `services.driver.gpus` | `[4,5,6,7]` | `[4,5,6,7,8]` |');
    expect(summary).toMatch(/\| 4 \| driver, physics \| \d+\.\d \| \d+%/);
  });

  it('reports the new file, not the existing one, as the duplicate', async () => {
    const copy = repoFile(`${EXP}/renderer-split.yaml`).replace('name: renderer-split', 'name: aa-copy');
    const r = recorder();
    const report = await validatePullRequest(
      { changedPaths: [`${EXP}/aa-copy.yaml`] },
      { files: head({ [`${EXP}/aa-copy.yaml`]: copy }), config: fileSystemSource(REPO) },
      r.reporter,
    );
    expect(report.files[0]?.errors.map((e) => e.rule)).toEqual(['duplicate-topology']);
    expect(report.files[0]?.errors[0]?.message).toContain('candidate `renderer-split`');
  });

  it('reads clusters and presets from the trusted side, never from the pull request', async () => {
    // The pull request tries to loosen the cluster (more GPUs): validation still uses the default branch's file.
    const looser = repoFile('topologies/clusters.yaml').replace('gpus_per_node: 8', 'gpus_per_node: 16');
    const candidate =
      'name: sixteen\nparent: baseline\ntopology:\n  services:\n    driver:\n      gpus: [12, 13, 14, 15]\n';
    const r = recorder();
    const report = await validatePullRequest(
      { changedPaths: [`${EXP}/sixteen.yaml`, 'topologies/clusters.yaml'] },
      {
        files: head({ [`${EXP}/sixteen.yaml`]: candidate, 'topologies/clusters.yaml': looser }),
        config: fileSystemSource(REPO),
      },
      r.reporter,
    );
    const sixteen = report.files.find((f) => f.path.endsWith('sixteen.yaml'));
    expect(sixteen?.errors.filter((e) => e.rule === 'gpu-index')).toHaveLength(4);
  });

  it('refuses a candidate name that could read as a longer experiment id, at its line', async () => {
    // `topo-<exp>-b-20260101-…` could be a run of experiment `<exp>-b-20260101`: reserved.
    for (const name of ['b-20260101-x', 'more-12345678', 'a-b-00000000-c']) {
      const text = `hypothesis: reserved\nname: ${name}\nparent: baseline\ntopology:\n  runtime:\n    nr_workers: 7\n`;
      const r = recorder();
      const report = await validatePullRequest(
        { changedPaths: [`${EXP}/${name}.yaml`] },
        { files: head({ [`${EXP}/${name}.yaml`]: text }), config: fileSystemSource(REPO) },
        r.reporter,
      );
      const reserved = report.files[0]?.errors.find((e) => e.rule === 'reserved-name');
      expect(reserved, name).toMatchObject({
        file: `${EXP}/${name}.yaml`,
        line: 2,
        keyPath: 'name',
        severity: 'error',
      });
      expect(reserved?.message).toContain('longer experiment id');
      expect(reserved?.message).toMatch(/e\.g\. `[a-z0-9-]+`/);
    }
    // Digits that are not a dash-delimited run of exactly 8 stay allowed.
    for (const name of ['gpu8-workers', 'b-2026010', 'v123456789', 'b-d20260101']) {
      const text = `name: ${name}\nparent: baseline\ntopology:\n  runtime:\n    nr_workers: 7\n`;
      const report = await validatePullRequest(
        { changedPaths: [`${EXP}/${name}.yaml`] },
        { files: head({ [`${EXP}/${name}.yaml`]: text }), config: fileSystemSource(REPO) },
        recorder().reporter,
      );
      expect(report.files[0]?.errors.map((e) => e.rule) ?? [], name).not.toContain('reserved-name');
    }
  });

  it('refuses a candidate name another experiment of the pull request also uses, at its name', async () => {
    const other = 'topologies/topology-opt-other-ord-20261203';
    const text = 'name: twin\nparent: baseline\ntopology:\n  runtime:\n    nr_workers: 7\n';
    const files = head({
      [`${EXP}/twin.yaml`]: text,
      [`${other}/experiment.yaml`]: repoFile(`${EXP}/experiment.yaml`).replace(
        'topology-opt-vavam-ord-20261202',
        'topology-opt-other-ord-20261203',
      ),
      [`${other}/twin.yaml`]: text.replace('parent: baseline\n', ''),
    });
    const changedPaths = [`${EXP}/twin.yaml`, `${other}/twin.yaml`];
    const report = await validatePullRequest(
      { changedPaths },
      { files, config: fileSystemSource(REPO) },
      recorder().reporter,
    );
    for (const path of changedPaths) {
      const file = report.files.find((f) => f.path === path);
      const shared = file?.errors.find((e) => e.rule === 'shared-name');
      expect(shared, path).toMatchObject({ line: 1, keyPath: 'name', severity: 'error' });
      expect(shared?.message).toContain('names must be unique across the pull request');
    }
    // one experiment alone (or another pull request) may use the name
    const alone = await validatePullRequest(
      { changedPaths: [`${EXP}/twin.yaml`] },
      { files, config: fileSystemSource(REPO) },
      recorder().reporter,
    );
    expect(alone.files[0]?.errors.map((e) => e.rule)).not.toContain('shared-name');
  });

  it('says so when no topology file changed', async () => {
    const r = recorder();
    const report = await validatePullRequest(
      { changedPaths: ['README.md'] },
      { files: head({}) },
      r.reporter,
    );
    expect(report.files).toEqual([]);
    expect(r.summaries[0]).toContain('No topology files changed');
  });

  it('a candidate outside an experiment folder is refused with the reason', async () => {
    const report = await validateFiles(['topologies/lost/c.yaml'], {
      files: memorySource({ 'topologies/lost/c.yaml': 'name: c\ntopology: {}\n' }),
      config: fileSystemSource(REPO),
    });
    expect(report.files[0]?.errors.map((e) => e.rule)).toEqual(['experiment-missing']);
  });

  it('the summary of a clean candidate shows no findings', async () => {
    const report = await validateFiles([`${EXP}/more-workers.yaml`], { files: fileSystemSource(REPO) });
    expect(report.errorCount + report.warningCount).toBe(0);
    const md = validationSummary(report);
    expect(md).toContain('✅ 1 file(s) valid');
    expect(md).toContain('| `runtime.nr_workers` | `8` | `16` |');
  });
});
