// The demo's failure path on the local cluster: a baseline the twin refuses at start-up (a deploy=
// with no twin profile, as AlpaSim's wizard refuses an unknown deploy) fails for a reason other than
// GPU memory. The demo must exit 1, name the job log's line, run no suggestion round, never advise
// GPU memory, and leave no job behind. About 10 s: one job that fails in its first second.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordProblems } from '../../../src/record/validate.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { type CliProcessRun, spawnTopo } from '../../support/cli-process.js';
import { clusterCommand, requireCluster } from '../../support/cluster.js';

const COMMAND = [
  'sbatch --account=demo --partition=gpu --gpus-per-node=8',
  'src/tools/run-on-slurm/submit.sh',
  'deploy=twin-no-such-profile',
  'topology=8gpu_12rollouts',
  'driver=vavam',
].join(' ');

describe('topo demo whose baseline fails at start-up, not for GPU memory', () => {
  let out: string;
  let ran: CliProcessRun;

  beforeAll(async () => {
    requireCluster();
    out = mkdtempSync(join(tmpdir(), 'topo-demo-broken-'));
    ran = await spawnTopo(['demo', '--quick', '--out', out, '--command', COMMAND]);
  });

  it('exits 1 naming the failure and the line of the Slurm job log that says why', () => {
    const all = `${ran.stdout}\n${ran.stderr}`;
    expect(ran.code, all).toBe(1);
    expect(ran.stdout).toMatch(/baseline: failed — /);
    const measured = ran.stdout.split('\n').find((l) => l.startsWith('the demo measured nothing:'));
    expect(measured, all).toBeDefined();
    expect(measured).toMatch(
      /^the demo measured nothing: baseline failed \(crash: .*\); the log of Slurm job \d+ says: /,
    );
    // the twin's own words, as AlpaSim's wizard refuses an unknown deploy
    expect(measured).toMatch(/deploy=twin-no-such-profile: no twin profile .*twin-no-such-profile\.yaml/);
  });

  it('runs no suggestion round and never blames GPU memory', () => {
    expect(ran.stdout).not.toMatch(/^round \d/m);
    expect(ran.stdout).not.toMatch(/GPU memory|smaller preset|out of memory/i);
  });

  it('records the baseline as failed, in a record that validates, and leaves no job behind', async () => {
    const dir = join(out, 'experiments');
    const jsonFile = readdirSync(dir).find((f) => f.endsWith('.json'));
    expect(jsonFile).toBeDefined();
    const record = JSON.parse(readFileSync(join(dir, jsonFile!), 'utf8')) as ExperimentRecord;
    expect(recordProblems(record)).toEqual([]);
    expect(record.runs.map((r) => [r.name, r.status])).toEqual([['baseline', 'failed']]);
    const id = jsonFile!.replace(/\.json$/, '');
    const live = clusterCommand(['squeue', '--noheader', '--format=%j %T'])
      .split('\n')
      .filter((l) => l.startsWith(`topo-${id}-`) && !/COMPLET|CANCEL|FAIL/.test(l));
    expect(live).toEqual([]);
  });
});
