// One exit code for one situation, whatever the command (issue 35): a configuration the CLI cannot
// use is 2, a candidate that cannot be rendered is a finding (1) whose errors are the result on
// stdout (under --json in the error document), and a run name leads to its experiment's cluster.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { repoRoot } from '../../support/run-action.js';

const experiment = 'topology-opt-vavam-ord-20261202';

/** A checkout with the example experiment, its cluster `ord` (ssh) and, optionally, a broken candidate. */
function checkout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-exit-'));
  cpSync(join(repoRoot, 'topologies'), join(dir, 'topologies'), { recursive: true });
  writeFileSync(
    join(dir, 'topologies', experiment, 'broken.yaml'),
    'name: broken\nparent: baseline\nhypothesis: h\nexpected_effect: e\ntopology:\n  runtime:\n    nr_workers: 16\nsurprise: 1\n',
  );
  return dir;
}

function errorDoc(stdout: string) {
  const doc = JSON.parse(stdout);
  expect(cliSchemaErrors('error', doc)).toEqual([]);
  return doc;
}

describe('a configuration the CLI cannot use exits 2', () => {
  it.each([
    ['jobs', ['jobs', experiment]],
    ['cancel', ['cancel', `topologies/${experiment}/more-workers.yaml`]],
  ])('an ssh cluster without a private key (%s): configuration, not internal', async (_, args) => {
    const r = await runTopo([...args, '--json'], checkout(), {});
    expect(r.code).toBe(2);
    const doc = errorDoc(r.stdout);
    expect(doc.error.kind).toBe('configuration');
    expect(doc.error.message).toContain('no private key is configured');
    expect(r.stderr).toContain('set TOPO_SSH_KEY');
  });

  it('jobs of a mistyped experiment exits 2 as status does, before any Slurm call', async () => {
    const dir = checkout();
    for (const command of ['jobs', 'status']) {
      const r = await runTopo([command, 'topology-opt-vavam-ord-20261203', '--json'], dir, {});
      expect(r.code, command).toBe(2);
      const doc = errorDoc(r.stdout);
      expect(doc.error).toMatchObject({ kind: 'configuration' });
      expect(doc.error.message).toContain('no experiment topology-opt-vavam-ord-20261203');
      // a near miss names the experiment the checkout has (issue 41: no did-you-mean)
      expect(doc.error.message).toContain('(did you mean `topology-opt-vavam-ord-20261202`?)');
    }
  });

  it('record refuses a bad call before any Slurm call: a flag to choose, a mistyped candidate', async () => {
    const dir = checkout();
    const both = await runTopo(['record', experiment, 'more-workers', '--accept', '--reject'], dir, {});
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give exactly one of --accept and --reject');
    const typo = await runTopo(['record', experiment, 'more-worker', '--accept', '--json'], dir, {});
    expect(typo.code).toBe(2);
    expect(errorDoc(typo.stdout).error.message).toBe(
      `no candidate more-worker in topologies/${experiment} (did you mean \`more-workers\`?)`,
    );
  });

  it('jobs with an invalid clusters file: exit 2 and, under --json, the error document', async () => {
    const dir = checkout();
    writeFileSync(
      join(dir, 'topologies/clusters.yaml'),
      'clusters:\n  ord:\n    transport: carrier-pigeon\n',
    );
    const r = await runTopo(['jobs', experiment, '--json'], dir, {});
    expect(r.code).toBe(2);
    expect(errorDoc(r.stdout).error.message).toContain('clusters.yaml');
  });
});

describe('a candidate that cannot be rendered is a finding', () => {
  const broken = `topologies/${experiment}/broken.yaml`;

  it.each([['render'], ['submit']])(
    '%s --json prints the error document with the errors',
    async (command) => {
      const r = await runTopo([command, broken, '--json'], checkout(), {});
      expect(r.code).toBe(1);
      const doc = errorDoc(r.stdout);
      expect(doc).toMatchObject({ command, error: { kind: 'findings', exit_code: 1 } });
      expect(doc.error.message).toContain(
        `${broken}: not ${command === 'render' ? 'rendered' : 'submitted'}`,
      );
      expect(doc.error.issues.join('\n')).toContain('surprise');
      expect(r.stderr).toContain(doc.error.message);
    },
  );

  it('without --json its errors are on stdout (the findings) and the reason on stderr', async () => {
    const r = await runTopo(['render', broken], checkout(), {});
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('error');
    expect(r.stdout).toContain('surprise');
    expect(r.stderr).toBe(`topo render: ${broken}: not rendered: fix the 1 error(s) above first\n`);
  });
});

describe('analyze <run> finds the cluster from the run name', () => {
  it("reads the Prometheus of the run's experiment's cluster without --cluster or --prometheus", async () => {
    const dir = checkout();
    const file = join(dir, 'topologies/clusters.yaml');
    const clusters = parse(readFileSync(file, 'utf8'));
    clusters.clusters.ord.prometheus_url = 'http://127.0.0.1:9';
    writeFileSync(file, stringify(clusters));
    const r = await runTopo(['analyze', `topo-${experiment}-more-workers-0123abcd-89abcdef`], dir, {});
    // The cluster's Prometheus was asked (and is down): not "no Prometheus: pass --prometheus".
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cannot reach Prometheus at http://127.0.0.1:9');
    const other = await runTopo(['analyze', 'topo-topology-opt-other-ord-20261202-a-0123abcd'], dir, {});
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('no Prometheus');
  });
});
