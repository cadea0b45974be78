// The Slurm adapter against the real local cluster, directly and through SSH, with accounting
// (slurmdbd: sacct answers) and without: job life cycle, cancel, GPU and host out-of-memory, a node
// going down mid-job, a requeue; each failure classified; times, durations and GPU-minutes read alike.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyFailure } from '../../../src/slurm/classify.js';
import {
  parseSacct,
  SACCT_FORMAT,
  slurmDurationToSeconds,
  slurmTimeToUnix,
} from '../../../src/slurm/parse.js';
import { isLive, type SlurmClient, type SlurmJob } from '../../../src/slurm/types.js';
import type { LocalClusterEnv } from '../../support/cluster.js';
import { accountingVariants } from '../../support/private-cluster.js';
import {
  experimentId,
  jobName,
  makeClient,
  sbatchArgv,
  type TransportKind,
  waitForJob,
  waitForLaunch,
  waitForNodeInService,
} from './helpers.js';

const variants = accountingVariants();
for (const variant of variants)
  describe.each<TransportKind>(['local', 'ssh'])(
    `Slurm adapter over the %s transport, ${variant.label}`,
    (kind) => {
      const exp = experimentId(kind);
      const prefix = `topo-${exp}-`;
      const clusterCommand = (argv: string[]) => variant.command(argv);
      let env: LocalClusterEnv;
      let slurm: SlurmClient;

      beforeAll(() => {
        env = variant.env();
        slurm = makeClient(kind, env);
      });
      /** The job as sacct lists it, once slurmdbd has its end. */
      async function sacctJob(id: string): Promise<SlurmJob> {
        const argv = ['sacct', '--parsable2', '--noheader', '--allocations', `--jobs=${id}`];
        for (let i = 0; i < 40; i++) {
          // Through the client's transport: TZ=UTC, as every command the adapter runs.
          const r = await slurm.transport.run([...argv, `--format=${SACCT_FORMAT}`]);
          const [job] = parseSacct(r.stdout).jobs;
          if (job && !isLive(job.status)) return job;
          await new Promise((r) => setTimeout(r, 250));
        }
        throw new Error(`sacct did not list job ${id} as ended within 10 s`);
      }
      afterAll(async () => {
        for (const j of await slurm.jobs(prefix))
          if (['PENDING', 'RUNNING'].includes(j.state)) await slurm.cancel(j.id);
        await slurm.close();
      });

      it('submits a job and sees it go PENDING → RUNNING → COMPLETED, with its output', async () => {
        const name = jobName(exp, 'lifecycle');
        // Held first, so PENDING is observed for certain, then released.
        const id = await slurm.submit([
          ...sbatchArgv(env, { name, script: 'echo hello from $SLURM_JOB_ID; sleep 2' }),
          '--hold',
        ]);
        expect(id).toMatch(/^[0-9]+$/);
        const pending = await waitForJob(slurm, prefix, (j) => j.id === id, 'the held job');
        expect(pending).toMatchObject({ name, state: 'PENDING', reason: 'JobHeldUser', exitCode: null });
        await slurm.release(id);
        const running = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.state === 'RUNNING',
          'RUNNING',
        );
        expect(running.nodes).toBe('node4');
        const done = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.state === 'COMPLETED',
          'COMPLETED',
        );
        expect(done).toMatchObject({ exitCode: 0, signal: null, restarts: 0, gpus: 8 });
        // Times and durations read the same whichever command printed them (squeue `0:02`, sacct `00:00:02`).
        const seconds = slurmDurationToSeconds(done.elapsed) as number;
        expect(seconds).toBeGreaterThanOrEqual(1);
        expect(done.gpuMinutes).toBeCloseTo((8 * seconds) / 60, 6);
        const started = slurmTimeToUnix(done.startTime) as number;
        expect((slurmTimeToUnix(done.endTime) as number) - started).toBeGreaterThanOrEqual(seconds - 1);
        expect(Math.abs(started - Date.now() / 1000)).toBeLessThan(600);
        if (variant.accounting) {
          // Accounting prints the same job in its own formats: the same seconds and GPU-minutes.
          const accounted = await sacctJob(id);
          expect(accounted.elapsed).toMatch(/^\d{2}:\d{2}:\d{2}$/);
          expect(done.elapsed).toMatch(/^\d+:\d{2}$/);
          expect(slurmDurationToSeconds(accounted.elapsed)).toBe(seconds);
          expect(accounted).toMatchObject({
            state: 'COMPLETED',
            gpus: 8,
            gpuMinutes: done.gpuMinutes,
            submitTime: done.submitTime,
            startTime: done.startTime,
            endTime: done.endTime,
          });
        }
        expect(done.stdoutPath).toBe(`${env.runDir}/slurm_output/${name}_${id}.log`);
        expect(await slurm.tail(done, 5)).toEqual([`hello from ${id}`]);
        expect(await slurm.tail(id, 5)).toEqual([`hello from ${id}`]);
        expect(classifyFailure(done, [])).toBeNull();
      });

      it('cancels a running job and classifies it as cancelled', async () => {
        const name = jobName(exp, 'cancel');
        const id = await slurm.submit(
          sbatchArgv(env, { name, script: 'sleep 120', exclusive: false, gpus: 1 }),
        );
        await waitForLaunch(
          await waitForJob(slurm, prefix, (j) => j.id === id && j.state === 'RUNNING', 'RUNNING'),
        );
        await slurm.cancel(id);
        const job = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.state === 'CANCELLED',
          'CANCELLED',
        );
        const failure = classifyFailure(job, await slurm.tail(job, 20));
        expect(failure).toMatchObject({ kind: 'cancelled', slurm_state: 'CANCELLED' });
      });

      it('classifies a job that prints the CUDA out-of-memory line and exits 1 as gpu-oom', async () => {
        const name = jobName(exp, 'gpu-oom');
        const line =
          'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 GiB';
        const id = await slurm.submit(
          sbatchArgv(env, {
            name,
            script: `echo warming up; echo '${line}' >&2; exit 1`,
            exclusive: false,
            gpus: 1,
          }),
        );
        const job = await waitForJob(slurm, prefix, (j) => j.id === id && j.state === 'FAILED', 'FAILED');
        expect(job).toMatchObject({ exitCode: 1, reason: 'NonZeroExitCode' });
        const failure = classifyFailure(job, await slurm.tail(job, 50));
        expect(failure).toMatchObject({ kind: 'gpu-oom', gpu: 3, exit_code: '1' });
        expect(failure?.evidence).toContain(line);
      });

      it('kills a job over its --mem (RSS polling, no cgroups) and classifies it as host-oom', async () => {
        const name = jobName(exp, 'host-oom');
        // One line: arguments with newlines are refused before they reach a command line.
        const grow =
          'python3 -c "import time; a = [bytearray(10 * 1024 * 1024) for _ in range(1)]; [a.append(bytearray(10 * 1024 * 1024)) or time.sleep(0.02) for _ in range(200)]"';
        const id = await slurm.submit(
          sbatchArgv(env, { name, script: grow, mem: '60M', exclusive: false, gpus: 1 }),
        );
        const job = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && !['PENDING', 'RUNNING', 'COMPLETING'].includes(j.state),
          'the end',
        );
        expect(job.state).not.toBe('COMPLETED');
        const log = await slurm.tail(job, 50);
        const failure = classifyFailure(job, log);
        expect(failure?.kind).toBe('host-oom');
        expect(failure?.evidence?.some((l) => /memory limit/i.test(l))).toBe(true);
      });

      it('reports NODE_FAIL when the node goes down mid-job, classified as node-failure', async () => {
        const name = jobName(exp, 'node-down');
        const id = await slurm.submit(sbatchArgv(env, { name, script: 'sleep 120', requeue: false }));
        const running = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.state === 'RUNNING',
          'RUNNING',
        );
        const node = running.nodes as string;
        await waitForLaunch(running);
        try {
          clusterCommand(['scontrol', 'update', `nodename=${node}`, 'state=down', 'reason=integration-test']);
          const job = await waitForJob(
            slurm,
            prefix,
            (j) => j.id === id && j.state === 'NODE_FAIL',
            'NODE_FAIL',
          );
          const failure = classifyFailure(job, await slurm.tail(job, 20));
          expect(failure).toMatchObject({ kind: 'node-failure', slurm_state: 'NODE_FAIL' });
          expect(failure?.message).toContain(node);
        } finally {
          clusterCommand(['scontrol', 'update', `nodename=${node}`, 'state=resume']);
        }
        await waitForNodeInService(node, () => clusterCommand(['sinfo', '-h', '-N', '-n', node, '-o', '%T']));
      });

      it('follows a requeued job: back to PENDING with a restart counted, then running again', async () => {
        const name = jobName(exp, 'requeue');
        const id = await slurm.submit(
          sbatchArgv(env, {
            name,
            script: 'echo attempt $SLURM_RESTART_COUNT; sleep 60',
            exclusive: false,
            gpus: 1,
          }),
        );
        await waitForJob(slurm, prefix, (j) => j.id === id && j.state === 'RUNNING', 'RUNNING');
        await new Promise((r) => setTimeout(r, 4000));
        const first = await waitForJob(slurm, prefix, (j) => j.id === id, 'listed');
        clusterCommand(['scontrol', 'requeue', id]);
        const requeued = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.restarts === 1,
          'restart count 1',
        );
        expect(['PENDING', 'REQUEUED', 'COMPLETING', 'RUNNING']).toContain(requeued.state);
        // Still live: not a failure while it waits to run again.
        expect(classifyFailure({ ...requeued, state: 'PENDING' }, [])).toBeNull();
        const again = await waitForJob(
          slurm,
          prefix,
          (j) => j.id === id && j.state === 'RUNNING' && j.restarts === 1,
          'RUNNING again',
          60_000,
        );
        expect(again.startTime).not.toBeNull();
        // What it held (issue 40): with accounting (`sacct -D`) the first allocation too, so a budget
        // never loses it; without, the controller knows the current allocation only.
        await new Promise((r) => setTimeout(r, 2000));
        const held = await waitForJob(slurm, prefix, (j) => j.id === id, 'listed');
        const current = slurmDurationToSeconds(held.elapsed) as number;
        expect(first.heldSeconds).toBeGreaterThanOrEqual(4);
        const before = variant.accounting ? (first.heldSeconds as number) : 0;
        expect(held.heldSeconds).toBeGreaterThanOrEqual(current + before);
        expect(held.heldSeconds).toBeLessThanOrEqual(current + before + (variant.accounting ? 3 : 0));
        expect(held.gpuMinutes).toBeCloseTo((held.heldSeconds as number) / 60, 6);
        await slurm.cancel(id);
      });

      it('fails with the quoted Slurm error when sbatch refuses the job', async () => {
        const argv = sbatchArgv(env, { name: jobName(exp, 'bad'), script: 'true' }).map((a) =>
          a.startsWith('--partition=') ? '--partition=nosuch' : a,
        );
        await expect(slurm.submit(argv)).rejects.toThrow(/exit code 1: .*invalid partition/i);
      });
    },
  );
