// Parsers against output captured from the local cluster (test/fixtures/slurm/captured, made by
// capture.sh), the documented formats (documented/) and a corpus of bad output (bad/).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SlurmOutputError } from '../../../src/slurm/errors.js';
import {
  accountingEnabled,
  decodeWaitStatus,
  expandOutputPattern,
  gpusFromTres,
  gpusPerNode,
  type ParsedJobs,
  parseSacct,
  parseSbatchParsable,
  parseScontrolJobs,
  parseSqueue,
  SACCT_FORMAT,
  SQUEUE_FORMAT,
  slurmDurationToSeconds,
  slurmTimeToUnix,
} from '../../../src/slurm/parse.js';
import { isLive, statusOf } from '../../../src/slurm/types.js';

const dir = join(import.meta.dirname, '../../fixtures/slurm');
const read = (p: string) => readFileSync(join(dir, p), 'utf8');

describe('squeue (captured from the local cluster)', () => {
  it('uses the field list the capture script used', () => {
    expect(read('capture.sh')).toContain(`SQUEUE_FORMAT='${SQUEUE_FORMAT}'`);
    expect(read('capture.sh')).toContain(`SACCT_FORMAT='${SACCT_FORMAT}'`);
  });

  it('parses live jobs: pending with reasons, running with nodes', () => {
    const jobs = parseSqueue(read('captured/squeue-live.txt')).jobs;
    expect(jobs.map((j) => [j.state, j.reason])).toEqual([
      ['PENDING', 'Resources'],
      ['PENDING', 'Priority'],
      ['RUNNING', null],
      ['RUNNING', null],
      ['RUNNING', null],
      ['RUNNING', null],
    ]);
    const pending = jobs[0];
    expect(pending).toMatchObject({
      id: '9',
      name: 'topo-capture-exclusive-3',
      nodes: null,
      exitCode: null,
      signal: null,
      restarts: 0,
    });
    expect(pending?.stdoutPath).toBe('/scratch/topo-capture-exclusive-3_9.log');
    expect(jobs[2]).toMatchObject({
      nodes: 'node1',
      submitTime: '2026-12-06T02:49:58',
      timeLimit: '5:00',
      elapsed: '0:03',
    });
  });

  it('parses finished jobs with exit codes and signals decoded from the wait status', () => {
    const byName = new Map(
      parseSqueue(read('captured/squeue-all-finished.txt')).jobs.map((j) => [
        j.name.replace('topo-capture-', ''),
        j,
      ]),
    );
    expect(byName.get('completed')).toMatchObject({ state: 'COMPLETED', exitCode: 0, signal: null });
    expect(byName.get('gpu-oom')).toMatchObject({
      state: 'FAILED',
      reason: 'NonZeroExitCode',
      exitCode: 1,
      signal: null,
    });
    expect(byName.get('host-oom')).toMatchObject({
      state: 'FAILED',
      reason: 'JobLaunchFailure',
      exitCode: null,
      signal: 9,
    });
    expect(byName.get('cancelled')).toMatchObject({ state: 'CANCELLED', exitCode: null, signal: 15 });
    expect(byName.get('timeout')).toMatchObject({
      state: 'TIMEOUT',
      reason: 'TimeLimit',
      signal: 15,
      timeLimit: '1:00',
    });
    expect(byName.get('node-fail')).toMatchObject({ state: 'NODE_FAIL', reason: 'NodeDown', exitCode: 0 });
    expect(byName.get('requeue')).toMatchObject({ state: 'COMPLETED', restarts: 1 });
  });

  it('parses a requeued job waiting for its begin time', () => {
    const [requeued] = parseSqueue(read('captured/squeue-requeue-nodefail.txt')).jobs;
    expect(requeued).toMatchObject({ state: 'PENDING', reason: 'BeginTime', restarts: 1, nodes: null });
  });

  it('returns no jobs for empty output', () => {
    expect(parseSqueue('')).toEqual({ jobs: [], skipped: [] });
    expect(parseSqueue('\n')).toEqual({ jobs: [], skipped: [] });
  });

  it('reads the name from the last field; a | in what a person wrote goes to the comment', () => {
    const {
      jobs: [job],
    } = parseSqueue('7|RUNNING|None|0|0|N/A|N/A|NONE|UNLIMITED|0:01||1|N/A|N/A|bob|N/A|a|b|c\n');
    expect(job).toMatchObject({
      name: 'c',
      comment: 'a|b',
      user: 'bob',
      stdoutPath: null,
      submitTime: null,
      endTime: null,
      timeLimit: 'UNLIMITED',
      nodes: null,
    });
  });

  it('reads the owner and the comment of every job', () => {
    const { jobs } = parseSqueue(read('captured/squeue-live.txt'));
    expect(jobs.every((j) => j.user === 'root' && j.comment === null)).toBe(true);
  });
});

describe('scontrol show job --oneliner (captured)', () => {
  it('parses every job with its expanded output path and exit pair', () => {
    const jobs = parseScontrolJobs(read('captured/scontrol-show-job-all.txt'));
    expect(jobs.length).toBeGreaterThanOrEqual(12);
    const hostOom = jobs.find((j) => j.name === 'topo-capture-host-oom');
    expect(hostOom).toMatchObject({ state: 'FAILED', signal: 9, exitCode: null, source: 'scontrol' });
    expect(hostOom?.stdoutPath).toMatch(/^\/scratch\/topo-capture-host-oom_\d+\.log$/);
    const requeue = jobs.find((j) => j.name === 'topo-capture-requeue');
    expect(requeue?.restarts).toBe(1);
  });

  it('parses a pending job and the empty answer', () => {
    const [job] = parseScontrolJobs(read('captured/scontrol-show-job-pending.txt'));
    expect(job).toMatchObject({ state: 'PENDING', nodes: null, exitCode: null });
    expect(parseScontrolJobs('No jobs in the system\n')).toEqual([]);
  });
});

describe('sacct --parsable2 (documented format)', () => {
  const { jobs } = parseSacct(read('documented/sacct-parsable2.txt'));
  it('reads states, "CANCELLED by <uid>", exit pairs and pending placeholders', () => {
    expect(jobs.map((j) => j.state)).toEqual([
      'COMPLETED',
      'CANCELLED',
      'OUT_OF_MEMORY',
      'PENDING',
      'PREEMPTED',
      'TIMEOUT',
      'NODE_FAIL',
      'RUNNING',
    ]);
    expect(jobs[1]).toMatchObject({ signal: 15, exitCode: null, restarts: null, source: 'sacct' });
    expect(jobs[3]).toMatchObject({ startTime: null, endTime: null, nodes: null, reason: 'Resources' });
    expect(jobs[6]).toMatchObject({ exitCode: 1, nodes: 'pool0-[0106-0107]' });
    expect(jobs[7]).toMatchObject({ name: 'bars', comment: '|other|name|with', user: 'alice' });
    expect(jobs[0]).toMatchObject({ user: 'alice', comment: null });
  });
});

describe('sacct of jobs submitted held (captured, accounting on)', () => {
  it('reads a held-then-released job that ran as no reason, not JobHeldUser (issue 41: `COMPLETED JobHeldUser`)', () => {
    const [released, cancelledHeld] = parseSacct(read('captured/sacct-held.txt')).jobs;
    expect(released).toMatchObject({ name: 'topo-capture-held-released', state: 'COMPLETED', reason: null });
    expect(cancelledHeld).toMatchObject({ state: 'CANCELLED', nodes: null, elapsed: '00:00:00' });
    // a job that never had nodes keeps what accounting says (it ended in its hold)
    const [never] = parseSacct(
      '41|CANCELLED by 0|JobHeldUser|0:0|2026-12-06T20:15:12|2026-12-06T20:15:13|2026-12-06T20:15:13||00:00:00|None assigned||root||topo-x\n',
    ).jobs;
    expect(never?.reason).toBe('JobHeldUser');
  });
});

describe('durations and GPU allocations, whichever command printed them', () => {
  it('reads squeue, sacct and scontrol durations alike', () => {
    expect(slurmDurationToSeconds('1:39')).toBe(99); // squeue
    expect(slurmDurationToSeconds('00:01:39')).toBe(99); // sacct, scontrol
    expect(slurmDurationToSeconds('0:03')).toBe(3);
    expect(slurmDurationToSeconds('1:02:03')).toBe(3723);
    expect(slurmDurationToSeconds('2-03:04:05')).toBe(2 * 86400 + 3 * 3600 + 4 * 60 + 5);
    expect(slurmDurationToSeconds('2-03')).toBe(2 * 86400 + 3 * 3600);
    expect(slurmDurationToSeconds('2-03:04')).toBe(2 * 86400 + 3 * 3600 + 4 * 60);
    expect(slurmDurationToSeconds('01:39.123')).toBe(99);
    for (const none of ['UNLIMITED', 'INVALID', 'N/A', '', null, undefined, '1:2:3:4'])
      expect(slurmDurationToSeconds(none)).toBeNull();
  });

  it('reads GPUs from TRES (plain or typed) and from the per-node request', () => {
    expect(gpusFromTres('cpu=16,mem=4G,node=1,billing=16,gres/gpu=8')).toBe(8);
    expect(gpusFromTres('cpu=16,gres/gpu:a100=4,gres/gpu:h100=2,node=1')).toBe(6);
    expect(gpusFromTres('cpu=16,gres/gpu=8,gres/gpu:a100=8')).toBe(8);
    expect(gpusFromTres('cpu=1,mem=256M,node=1,billing=1')).toBeNull();
    expect(gpusPerNode('gres:gpu:8', '2')).toBe(16); // Slurm 22.05
    expect(gpusPerNode('gres/gpu:a100:4', '1')).toBe(4); // newer Slurm, typed
    expect(gpusPerNode('N/A', '1')).toBeNull();
  });

  it('gives every job its GPU-minutes (elapsed × GPUs): squeue, sacct and scontrol agree', () => {
    const {
      jobs: [sq],
    } = parseSqueue(
      '12|RUNNING|None|0|0|N/A|N/A|N/A|5:00|1:39|node1|1|cpu=16,node=1,gres/gpu=8|gres:gpu:1|root|N/A|(null)|topo-a\n',
    );
    expect(sq).toMatchObject({ elapsed: '1:39', gpus: 8, gpuMinutes: 13.2 });
    const sacct = parseSacct(read('documented/sacct-parsable2.txt')).jobs;
    expect(sacct[0]).toMatchObject({ elapsed: '00:45:00', gpus: 8, gpuMinutes: 360 });
    expect(sacct[1]).toMatchObject({ gpus: 8 }); // typed gres/gpu:a100
    expect(sacct[3]).toMatchObject({ gpus: null, gpuMinutes: null }); // pending: nothing allocated
    expect(sacct[6]).toMatchObject({ gpus: 16, gpuMinutes: 16 * 29 + (16 * 50) / 60 });
  });
});

describe('small formats', () => {
  it('sbatch --parsable: id, or id;cluster', () => {
    expect(parseSbatchParsable(read('captured/sbatch-parsable.txt'))).toBe('1');
    expect(parseSbatchParsable('4242;iad\n')).toBe('4242');
  });
  it('scontrol show config: accounting on or off', () => {
    expect(accountingEnabled(read('documented/scontrol-show-config.txt'))).toBe(true);
    expect(accountingEnabled('AccountingStorageType   = accounting_storage/none\n')).toBe(false);
  });
  it('wait status', () => {
    expect(decodeWaitStatus(0)).toEqual({ exitCode: 0, signal: null });
    expect(decodeWaitStatus(256)).toEqual({ exitCode: 1, signal: null });
    expect(decodeWaitStatus(9)).toEqual({ exitCode: null, signal: 9 });
  });
  it('output patterns', () => {
    const job = { id: '42', name: 'topo-x', nodes: 'node[1-2]' };
    expect(expandOutputPattern('/r/%x_%j.log', job)).toBe('/r/topo-x_42.log');
    expect(expandOutputPattern('/r/%N-%5j-%%-%u.log', job)).toBe('/r/node1-00042-%-%u.log');
    expect(expandOutputPattern('/r/%A_%a.log', { id: '42_7', name: 'n', nodes: null })).toBe('/r/42_7.log');
  });
});

describe('a listing line that cannot be read is skipped with why, quoting it; the others stand', () => {
  const listings: Record<string, (text: string) => ParsedJobs> = { squeue: parseSqueue, sacct: parseSacct };
  const good: Record<string, string> = {
    squeue: read('captured/squeue-live.txt'),
    sacct: read('documented/sacct-parsable2.txt'),
  };
  for (const file of readdirSync(join(dir, 'bad')).filter((f) => /^(squeue|sacct)-/.test(f))) {
    it(file, () => {
      const command = file.split('-')[0] as string;
      const bad = read(join('bad', file));
      const parse = listings[command] as (text: string) => ParsedJobs;
      const alone = parse(bad);
      expect(alone.jobs).toEqual([]);
      expect(alone.skipped.length).toBeGreaterThan(0);
      expect(alone.skipped[0]).toMatchObject({ command, line: bad.split('\n')[0] });
      expect(alone.skipped[0]?.problem).toMatch(/\S/);
      // Between good lines: every good line is still read.
      const mixed = parse(`${good[command]}${bad}${good[command]}`);
      expect(mixed.jobs).toEqual([...parse(good[command] ?? '').jobs, ...parse(good[command] ?? '').jobs]);
      expect(mixed.skipped).toEqual(alone.skipped);
    });
  }
});

describe('bad output of the other commands is an error that quotes it', () => {
  const parsers: Record<string, (text: string) => unknown> = {
    scontrol: (t) => (t.startsWith('Configuration') ? accountingEnabled(t) : parseScontrolJobs(t)),
    sbatch: parseSbatchParsable,
  };
  for (const file of readdirSync(join(dir, 'bad'))
    .filter((f) => !/^(squeue|sacct)-/.test(f))
    .sort()) {
    it(file, () => {
      const text = read(join('bad', file));
      const parser = parsers[file.split('-')[0] as string];
      if (!parser) throw new Error(`no parser for ${file}`);
      let error: unknown;
      try {
        parser(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SlurmOutputError);
      const firstLine = text.split('\n')[0] ?? '';
      expect((error as Error).message).toContain(firstLine.slice(0, 25));
    });
  }
});

describe('states and times every path reads the same way', () => {
  const line = (state: string, start = '2026-12-02T12:20:13') =>
    `12|${state}|None|0|0|2026-12-02T12:20:12|${start}|2026-12-02T12:25:13|5:00|0:03|node1|1|N/A|N/A|root|/x_%j.log|(null)|topo-a`;

  it('keeps a state word of a newer Slurm as UNKNOWN, live (it may hold a slot), with the raw word', () => {
    const [job] = parseSqueue(line('POWER_UP_NODE')).jobs;
    expect(job?.state).toBe('UNKNOWN');
    expect(job?.rawState).toBe('POWER_UP_NODE');
    expect(job?.status).toBe('unknown');
    expect(isLive('unknown')).toBe(true);
    expect(statusOf('POWER_UP_NODE')).toBe('unknown');
  });

  it.each(['STOPPED', 'SIGNALING', 'REQUEUE_HOLD', 'STAGE_OUT'])('%s is live in the one table', (s) => {
    expect(isLive(statusOf(s))).toBe(true);
    expect(isLive(statusOf('COMPLETED'))).toBe(false);
  });

  it('reads Slurm times as UTC whatever the runner zone (TZ is set on the commands)', () => {
    expect(slurmTimeToUnix('2026-12-02T12:20:13')).toBe(Date.UTC(2026, 11, 2, 12, 20, 13) / 1000);
    expect(slurmTimeToUnix(null)).toBeNull();
    expect(slurmTimeToUnix('Unknown')).toBeNull();
  });
});
