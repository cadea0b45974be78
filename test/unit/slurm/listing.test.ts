// The one job model of `jobs()`: live jobs from the controller, ended ones from accounting, merged by
// job id (captured from a local cluster with accounting: test/fixtures/slurm/capture.sh).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSlurmClient } from '../../../src/slurm/client.js';
import { ControllerUnreachableError, SlurmCommandError } from '../../../src/slurm/errors.js';
import { mergeJobListings } from '../../../src/slurm/listing.js';
import { parseSacct, parseSqueue } from '../../../src/slurm/parse.js';
import type { CommandResult, SlurmJob, Transport } from '../../../src/slurm/types.js';

const dir = join(import.meta.dirname, '../../fixtures/slurm');
const read = (p: string) => readFileSync(join(dir, p), 'utf8');
const controller = () => parseSqueue(read('captured/squeue-all-finished.txt')).jobs;
const accounting = () => parseSacct(read('captured/sacct-accounting.txt')).jobs;
const byName = (jobs: SlurmJob[], name: string) => jobs.find((j) => j.name === `topo-capture-${name}`);

/** A login node that answers each program with the given output, recording what ran. */
function scripted(outputs: Record<string, string>): Transport & { ran: string[]; argv: string[][] } {
  const ran: string[] = [];
  const argvs: string[][] = [];
  return {
    ran,
    argv: argvs,
    description: 'scripted',
    async run(argv): Promise<CommandResult> {
      ran.push(argv.slice(0, 2).join(' '));
      argvs.push([...argv]);
      const stdout = outputs[argv[0] as string];
      return stdout === undefined
        ? { stdout: '', stderr: 'no such command', code: 1 }
        : { stdout, stderr: '', code: 0 };
    },
    async close() {},
  };
}

describe('sacct with accounting (captured)', () => {
  it('never lists a held job; the controller does', () => {
    expect(byName(accounting(), 'held')).toBeUndefined();
    expect(byName(controller(), 'held')).toMatchObject({ state: 'PENDING', reason: 'JobHeldUser' });
  });
});

describe('mergeJobListings', () => {
  it('keeps every controller job (the held one too), the controller winning for a job both list', () => {
    const merged = mergeJobListings(controller(), accounting());
    expect(merged.map((j) => j.id).sort()).toEqual([...new Set(merged.map((j) => j.id))].sort());
    expect(byName(merged, 'held')).toMatchObject({ state: 'PENDING', source: 'squeue', restarts: 0 });
    const requeue = byName(merged, 'requeue');
    expect(requeue).toMatchObject({ source: 'squeue', restarts: 1 });
    expect(requeue?.stdoutPath).toMatch(/^\/scratch\/topo-capture-requeue_\d+\.log$/);
  });

  it('adds the ended jobs only accounting still knows, and drops its live ones the controller lost', () => {
    const ended = accounting().filter((j) => j.state !== 'RUNNING' && j.state !== 'PENDING');
    const stale: SlurmJob = { ...(ended[0] as SlurmJob), id: '9999', state: 'RUNNING', status: 'running' };
    const merged = mergeJobListings([], [...ended, stale]);
    expect(merged.map((j) => j.id)).toEqual(ended.map((j) => j.id));
    expect(merged.every((j) => j.source === 'sacct')).toBe(true);
  });
});

describe('a requeued job (issue 40): every allocation it held, from accounting', () => {
  // Captured: 9 s of 8 GPUs, `scontrol requeue`, then 6 s more (sacct -D: the REQUEUED one, then
  // the running one with its own submit and start; squeue: only the running one, its elapsed reset).
  const requeued = () => ({
    live: parseSqueue(read('captured/squeue-requeued.txt')).jobs,
    rows: parseSacct(read('captured/sacct-requeued-duplicates.txt')).jobs,
  });

  it('holds the first allocation and the one running now: 15 s, 2 GPU-minutes, one job', () => {
    const { live, rows } = requeued();
    expect(live[0]).toMatchObject({ restarts: 1, heldSeconds: 6 });
    const merged = mergeJobListings(live, rows);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ id: live[0]?.id, source: 'squeue', heldSeconds: 15, gpuMinutes: 2 });
  });

  it('once the controller forgot it, accounting alone: the latest allocation, with the earlier one added', () => {
    const { rows } = requeued();
    const ended = rows.map((r) =>
      r.state === 'RUNNING'
        ? { ...r, state: 'COMPLETED' as const, status: 'completed' as const, endTime: '2026-12-06T23:46:44' }
        : r,
    );
    const merged = mergeJobListings([], ended);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ source: 'sacct', startTime: '2026-12-06T23:46:38', heldSeconds: 16 });
  });

  it('a job waiting again after its requeue held its first allocation only (its start now is a forecast)', () => {
    const { live, rows } = requeued();
    const waiting: SlurmJob = {
      ...(live[0] as SlurmJob),
      state: 'PENDING',
      status: 'queued',
      heldSeconds: 0,
      gpuMinutes: 0,
    };
    const merged = mergeJobListings([waiting], rows.slice(0, 1));
    expect(merged[0]).toMatchObject({ heldSeconds: 9, gpuMinutes: 1.2 });
  });
});

describe('mergeJobListings after a controller lost its state', () => {
  it('keeps an accounted job whose id the controller gave again to a newer job (another submit time)', () => {
    const [old] = accounting();
    const reused: SlurmJob = {
      ...(controller()[0] as SlurmJob),
      id: old?.id as string,
      submitTime: '2027-01-01T00:00:00',
    };
    const merged = mergeJobListings([reused], [old as SlurmJob]);
    expect(merged.map((j) => [j.id, j.name, j.source])).toEqual([
      [reused.id, reused.name, 'squeue'],
      [old?.id, old?.name, 'sacct'],
    ]);
    const same = { ...reused, submitTime: old?.submitTime ?? null };
    expect(mergeJobListings([same], [old as SlurmJob])).toEqual([same]);
  });
});

describe('jobs() of a client', () => {
  const config = (type: string) => `AccountingStorageType   = ${type}\n`;

  it('with accounting: sacct, then squeue, one merged list by prefix', async () => {
    const t = scripted({
      scontrol: config('accounting_storage/slurmdbd'),
      id: 'root\n',
      sacct: read('captured/sacct-accounting.txt'),
      squeue: read('captured/squeue-all-finished.txt'),
    });
    const jobs = await createSlurmClient(t).jobs('topo-capture-');
    expect(t.ran).toEqual(['scontrol ping', 'id -un', 'scontrol show', 'sacct --parsable2', 'squeue --me']);
    // every allocation, a requeued job's earlier ones too
    expect(t.argv.find((a) => a[0] === 'sacct')).toContain('--duplicates');
    expect(byName(jobs, 'held')).toMatchObject({ state: 'PENDING', reason: 'JobHeldUser' });
    expect(new Set(jobs.map((j) => j.id)).size).toBe(jobs.length);
  });

  it('slurmdbd down: the controller alone, accounting `unreachable` and why; never a failed listing (issue 40)', async () => {
    // what sacct prints when slurmdbd does not answer (captured on the local cluster, slurmdbd stopped)
    const down = [
      'sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:127.0.0.1:17837: Connection refused',
      'sacct: error: Sending PersistInit msg: Connection refused',
      'sacct: error: Problem talking to the database: Connection refused',
    ].join('\n');
    const t = scripted({
      scontrol: config('accounting_storage/slurmdbd'),
      id: 'root\n',
      squeue: read('captured/squeue-all-finished.txt'),
    });
    const run = t.run.bind(t);
    t.run = async (argv, o) =>
      argv[0] === 'sacct' ? { stdout: '', stderr: `${down}\n`, code: 1 } : run(argv, o);
    const logged: string[] = [];
    const listing = await createSlurmClient(t, { log: (m) => logged.push(m) }).listing('topo-capture-');
    expect(listing).toMatchObject({
      accounting: 'unreachable',
      accountingProblem: 'sacct: error: Problem talking to the database: Connection refused',
    });
    expect(listing.jobs).toEqual(controller());
    expect(logged.join('\n')).toMatch(/accounting unreachable .*Problem talking to the database/);
  });

  it('a controller that is down fails at once, from its ping, before any command Slurm retries (issue 41)', async () => {
    // squeue, sbatch and `scontrol show config` retry a controller that refuses the connection for about
    // MessageTimeout (9 s on the local cluster) before they say so; `scontrol ping` says it at once
    // (captured on the local cluster, slurmctld killed)
    const t = scripted({ id: 'root\n' });
    const run = t.run.bind(t);
    let down = true;
    t.run = async (argv, o) => {
      if (argv.join(' ') !== 'scontrol ping') return run(argv, o);
      t.ran.push('scontrol ping');
      return down
        ? { stdout: 'Slurmctld(primary) at vm is DOWN\n*****\n', stderr: '', code: 1 }
        : { stdout: 'Slurmctld(primary) at vm is UP\n', stderr: '', code: 0 };
    };
    const client = createSlurmClient(t, { history: 'squeue' });
    await expect(client.jobs('topo-capture-')).rejects.toBeInstanceOf(ControllerUnreachableError);
    await expect(client.cancel('7')).rejects.toThrow(/is DOWN/);
    expect(t.ran.filter((c) => c !== 'id -un')).toEqual(['scontrol ping', 'scontrol ping']);
    // back up: one ping, then the commands; the next ones do not ask again
    down = false;
    t.ran.length = 0;
    await expect(client.cancel('7')).rejects.toBeInstanceOf(SlurmCommandError); // the fake has no scancel
    await expect(client.cancel('8')).rejects.toBeInstanceOf(SlurmCommandError);
    expect(t.ran).toEqual(['scontrol ping', 'scancel 7', 'scancel 8']);
  });

  it('without accounting: the controller alone, one command per listing', async () => {
    const t = scripted({
      scontrol: config('accounting_storage/none'),
      id: 'root\n',
      squeue: read('captured/squeue-all-finished.txt'),
    });
    const client = createSlurmClient(t);
    await client.jobs('topo-capture-');
    const jobs = await client.jobs('topo-capture-');
    expect(t.ran).toEqual(['scontrol ping', 'id -un', 'scontrol show', 'squeue --me', 'squeue --me']);
    expect(jobs).toEqual(controller());
  });
});
