// submitCandidate / cancelCandidate against the real local cluster, with accounting and without:
// idempotent by job name, exactly one job when submits are retried, doubled (two at once, over both
// transports), or the connection drops right after sbatch; no held job left when a step after sbatch
// fails; the max_parallel queue; SSH host key refusal; SSH reconnection after a lost connection
// (through a loopback TCP relay the test cuts).
import { createConnection, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlurmClient } from '../../../src/slurm/client.js';
import { ConnectionLostError, HostKeyMismatchError } from '../../../src/slurm/errors.js';
import { slurmDurationToSeconds } from '../../../src/slurm/parse.js';
import { isLive, type SlurmClient, type Transport } from '../../../src/slurm/types.js';
import { cancelCandidate, submitCandidate } from '../../../src/usecases/submit.js';
import type { LocalClusterEnv } from '../../support/cluster.js';
import { accountingVariants } from '../../support/private-cluster.js';
import { experimentId, jobName, makeClient, makeTransport, sbatchArgv, waitForJob } from './helpers.js';

const variants = accountingVariants();

/** Runs sbatch for real, then reports the connection as lost (the reply never arrived). */
function dropAfterSbatch(inner: Transport): Transport & { dropped: number } {
  const t = {
    description: `${inner.description} (drops after sbatch)`,
    dropped: 0,
    async run(argv: readonly string[], options?: Parameters<Transport['run']>[1]) {
      const result = await inner.run(argv, options);
      if (argv[0] === 'sbatch' && t.dropped === 0) {
        t.dropped++;
        throw new ConnectionLostError('connection lost while running sbatch (injected)');
      }
      return result;
    },
    close: () => inner.close(),
  };
  return t;
}

/** Lists once, then refuses every listing (squeue) after sbatch: a step after sbatch that fails. */
function failListingAfterSbatch(inner: Transport): Transport {
  let submitted = false;
  return {
    description: `${inner.description} (listing fails after sbatch)`,
    async run(argv, options) {
      if (argv[0] === 'sbatch') submitted = true;
      if (submitted && argv[0] === 'squeue')
        return { stdout: '', stderr: 'squeue: error: injected failure', code: 1 };
      return inner.run(argv, options);
    },
    close: () => inner.close(),
  };
}

for (const variant of variants)
  describe(`submitCandidate on the local cluster, ${variant.label}`, () => {
    const exp = experimentId('submit');
    const prefix = `topo-${exp}-`;
    let env: LocalClusterEnv;
    let local: SlurmClient;
    let ssh: SlurmClient;
    function rendered(name: string, script = 'sleep 30') {
      const argv = sbatchArgv(env, { name, script, exclusive: false, gpus: 1 });
      return { jobName: name, argv, shellLine: argv.join(' ') };
    }

    beforeAll(() => {
      env = variant.env();
      local = makeClient('local', env);
      ssh = makeClient('ssh', env);
    });
    afterAll(async () => {
      for (const j of await local.jobs(prefix)) if (isLive(j.status)) await local.cancel(j.id);
      await local.close();
      await ssh.close();
    });

    const liveWithName = async (name: string) =>
      (await local.jobs(prefix)).filter((j) => j.name === name && isLive(j.status));

    it('submits once, and a retried submit returns the existing job', async () => {
      const name = jobName(exp, 'retried');
      const first = await submitCandidate(
        { slurm: local },
        { experimentId: exp, cluster: 'local', submission: rendered(name) },
      );
      expect(first.status).toBe('submitted');
      const second = await submitCandidate(
        { slurm: ssh },
        { experimentId: exp, cluster: 'local-ssh', submission: rendered(name) },
      );
      expect(second).toMatchObject({
        status: 'existing',
        jobId: first.status === 'submitted' ? first.jobId : '',
      });
      expect(await liveWithName(name)).toHaveLength(1);
      // Released, so it runs.
      await waitForJob(local, prefix, (j) => j.name === name && j.state === 'RUNNING', 'RUNNING');
    });

    it('ends with exactly one job when two submits run at once (local and SSH)', async () => {
      const name = jobName(exp, 'doubled');
      const results = await Promise.all([
        submitCandidate(
          { slurm: local },
          { experimentId: exp, cluster: 'local', submission: rendered(name) },
        ),
        submitCandidate(
          { slurm: ssh },
          { experimentId: exp, cluster: 'local-ssh', submission: rendered(name) },
        ),
      ]);
      const ids = new Set(results.map((r) => ('jobId' in r ? r.jobId : undefined)));
      expect(ids.size).toBe(1);
      expect(results.filter((r) => r.status === 'submitted').length).toBeGreaterThanOrEqual(1);
      const live = await liveWithName(name);
      expect(live.map((j) => j.id)).toEqual([...ids]);
      await waitForJob(local, prefix, (j) => j.name === name && j.state === 'RUNNING', 'RUNNING');
      // A younger duplicate, if one was made, was retired under another name before it could run.
      const dups = (await local.jobs(`retired-${prefix}`)).filter((j) => j.name === `retired-${name}`);
      for (const d of dups) expect(d.state).toBe('CANCELLED');
    });

    it('ends with exactly one job when the connection drops right after sbatch', async () => {
      const name = jobName(exp, 'dropped');
      const flaky = dropAfterSbatch(makeTransport('ssh', env));
      const slurm = createSlurmClient(flaky);
      const result = await submitCandidate(
        { slurm },
        { experimentId: exp, cluster: 'local-ssh', submission: rendered(name) },
      );
      expect(flaky.dropped).toBe(1);
      expect(result.status).toBe('submitted');
      const live = await liveWithName(name);
      expect(live).toHaveLength(1);
      expect(live[0]?.id).toBe('jobId' in result ? result.jobId : '');
      await waitForJob(local, prefix, (j) => j.name === name && j.state === 'RUNNING', 'RUNNING (released)');
      await slurm.close();
    });

    it('cancels the held job it made when the listing after sbatch fails, and says so', async () => {
      const name = jobName(exp, 'withdrawn');
      const slurm = createSlurmClient(failListingAfterSbatch(makeTransport('local', env)));
      // The earlier tests' runs hold three slots: a higher max_parallel so this one is submitted.
      const error = await submitCandidate(
        { slurm },
        { experimentId: exp, cluster: 'local', submission: rendered(name), maxParallel: 10 },
      ).catch((e: Error) => e);
      expect((error as Error).message).toMatch(
        /injected failure.*; the held job (\d+) this submit made was cancelled \(it never ran\); submit again$/,
      );
      const id = /the held job (\d+)/.exec((error as Error).message)?.[1];
      const job = await waitForJob(
        local,
        prefix,
        (j) => j.id === id && !isLive(j.status),
        'the withdrawn job',
      );
      expect(job).toMatchObject({ name, state: 'CANCELLED' });
      expect(slurmDurationToSeconds(job.elapsed)).toBe(0); // it never ran
      await slurm.close();
    });

    it('queues a request beyond max_parallel and tells its place; a dry run submits nothing', async () => {
      const exp2 = experimentId('queue');
      const p2 = `topo-${exp2}-`;
      const names = ['a', 'b', 'c'].map((c) => jobName(exp2, c));
      try {
        for (const n of names.slice(0, 2)) {
          const r = await submitCandidate(
            { slurm: local },
            { experimentId: exp2, cluster: 'local', submission: rendered(n), maxParallel: 2 },
          );
          expect(r.status).toBe('submitted');
        }
        const ahead = [{ jobName: names[0] as string }, { jobName: names[1] as string }];
        const dry = await submitCandidate(
          { slurm: local },
          {
            experimentId: exp2,
            cluster: 'local',
            submission: rendered(names[2] as string),
            maxParallel: 2,
            ahead,
            dryRun: true,
          },
        );
        expect(dry).toMatchObject({ status: 'dry-run', wouldBe: 'queued', position: 1 });
        const queued = await submitCandidate(
          { slurm: local },
          {
            experimentId: exp2,
            cluster: 'local',
            submission: rendered(names[2] as string),
            maxParallel: 2,
            ahead,
          },
        );
        expect(queued).toMatchObject({ status: 'queued', position: 1, live: 2, maxParallel: 2 });
        expect((await local.jobs(p2)).map((j) => j.name).sort()).toEqual(names.slice(0, 2).sort());

        // A slot frees: the queued request goes in.
        const cancelled = await cancelCandidate(
          { slurm: local },
          { experimentId: exp2, jobName: names[0] as string },
        );
        expect(cancelled.cancelled).toHaveLength(1);
        await waitForJob(local, p2, (j) => j.name === names[0] && j.state === 'CANCELLED', 'CANCELLED');
        const now = await submitCandidate(
          { slurm: local },
          {
            experimentId: exp2,
            cluster: 'local',
            submission: rendered(names[2] as string),
            maxParallel: 2,
            ahead,
          },
        );
        expect(now.status).toBe('submitted');
      } finally {
        for (const j of await local.jobs(p2)) if (isLive(j.status)) await local.cancel(j.id);
      }
    });

    it('refuses an SSH host whose key differs from the configured one', async () => {
      const wrongKey = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOsm5KGf5wlZu2Y/NB19kzsGsNbFxEYAvyxaq6Wg4Kq8';
      const slurm = createSlurmClient(makeTransport('ssh', env, { knownHostKey: wrongKey }));
      const error = await slurm.jobs(prefix).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HostKeyMismatchError);
      expect(String(error)).toMatch(
        /refusing root@127\.0\.0\.1:\d+: its host key SHA256:\S+ is not the configured known_host_key SHA256:/,
      );
      await slurm.close();
    });

    it('reconnects after the SSH connection is cut and re-runs an idempotent command', async () => {
      // A loopback relay in front of sshd that the test can cut.
      const sockets = new Set<Socket>();
      const relay = createServer((client) => {
        const upstream = createConnection({ host: '127.0.0.1', port: env.sshPort });
        sockets.add(client).add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
      await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
      const port = (relay.address() as { port: number }).port;
      const slurm = createSlurmClient(makeTransport('ssh', env, { port }));
      try {
        expect(Array.isArray(await slurm.jobs(prefix))).toBe(true);
        for (const s of sockets) s.destroy();
        sockets.clear();
        // The next call finds the connection gone and connects again.
        expect((await slurm.jobs(prefix)).length).toBeGreaterThan(0);
        // Cut while a command runs: squeue is idempotent, so it is re-run on a new connection.
        const pending = slurm.jobs(prefix);
        setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, 5);
        expect((await pending).length).toBeGreaterThan(0);
      } finally {
        await slurm.close();
        relay.close();
      }
    });
  });
