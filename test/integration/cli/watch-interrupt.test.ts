// `topo watch` interrupted at any point, and a run that never sends telemetry (issue 41's Goal:
// "nothing is left held or running, even after a Ctrl-C at any point"), on the local cluster with
// accounting and without. The baseline runs the twin's `twin-silent` profile: its job runs and never
// sends a metric. A real SIGINT reaches a `topo watch` process during a look (a `squeue` that takes
// seconds), between looks, and while it stops the run (a `scancel` that takes seconds): each exits
// 130 with Slurm in order, and the next watch resumes. Once the no-telemetry deadline and its
// wall-clock floor passed, the watch stops the job (failed, not left running) and records it failed;
// a last watch finds nothing to do. Before, the watch called the run failed and exited 0 with its job
// running to its time limit (it never reached scancel).
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_TELEMETRY_WALL_FLOOR_SECONDS } from '../../../src/judge/observe.js';
import { runTopo } from '../../support/cli.js';
import { type CliProcessRun, spawnTopo } from '../../support/cli-process.js';
import type { LocalClusterEnv } from '../../support/cluster.js';
import { accountingVariants } from '../../support/private-cluster.js';
import { callCount, slowCommand } from '../../support/slow-command.js';
import { requireTwinBundle } from '../../support/twin-job.js';
import { type Team, teamEnv, teamExperiment, teamJobs } from './team.js';

const variants = accountingVariants();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIVE = ['PENDING', 'RUNNING', 'CONFIGURING', 'COMPLETING'];

for (const variant of variants)
  describe(`topo watch interrupted at any point, and a run without telemetry, ${variant.label}`, () => {
    let team: Team;
    let cluster: LocalClusterEnv;
    const cleanup: string[] = [];
    const env = (extra: NodeJS.ProcessEnv = {}) => teamEnv(cluster, extra);
    const topo = (...args: string[]) => runTopo(args, team.dir, env());
    const jobs = () => teamJobs(team, env());
    /** `topo watch` as a process; `when` gets the child once it runs, to send it SIGINT. */
    const watch = (
      extraEnv: NodeJS.ProcessEnv,
      when?: (kill: () => boolean) => void,
    ): Promise<CliProcessRun> =>
      spawnTopo(['watch', team.id, '--json', '--interval', '2'], undefined, {
        cwd: team.dir,
        env: env(extraEnv),
        started: (child) => when?.(() => child.kill('SIGINT')),
      });
    /** Polls `ready` every 100 ms; SIGINT `delayMs` after it holds (none when the watch ended first). */
    const interruptWhen =
      (ready: () => boolean, delayMs = 0) =>
      (kill: () => boolean) => {
        const poll = setInterval(() => {
          if (!ready()) return;
          clearInterval(poll);
          setTimeout(kill, delayMs);
        }, 100);
        setTimeout(() => clearInterval(poll), 600_000);
      };
    afterAll(async () => {
      if (team) for (const c of ['baseline', 'model']) await topo('cancel', team.file(c));
      for (const d of [...cleanup, team?.dir]) if (d) rmSync(d, { recursive: true, force: true });
    });

    it('Ctrl-C during a look, between looks and while it stops the run leaves Slurm in order; the failed run is stopped and recorded', async () => {
      requireTwinBundle();
      cluster = variant.env();
      team = teamExperiment(`wint${variant.accounting ? 'a' : 'n'}`, { deploy: 'twin-silent' });
      const submitted = await topo('submit', team.file('baseline'), '--json');
      expect(submitted.code, submitted.stderr).toBe(0);
      const runName = JSON.parse(submitted.stdout).job_name as string;
      const started = Date.now();
      const live = async () => (await jobs()).filter((j) => LIVE.includes(j.state)).map((j) => j.name);

      // during a look: the listing (squeue) is slow; SIGINT while the first look's runs (the watch
      // lists the jobs once to find its runs, then once per look)
      const look = slowCommand('squeue', 3);
      cleanup.push(look.bin);
      const during = await watch(
        { PATH: `${look.bin}:${process.env.PATH}` },
        interruptWhen(() => callCount(look) > 1),
      );
      expect(during.code, during.stderr).toBe(130);
      expect(during.stderr).toContain(`\`topo watch ${team.id}\` resumes`);
      expect(await live()).toEqual([runName]);

      // between looks: SIGINT a moment after a look's listing, while the watch waits for the next
      const calls = slowCommand('squeue', 0);
      cleanup.push(calls.bin);
      const between = await watch(
        { PATH: `${calls.bin}:${process.env.PATH}` },
        interruptWhen(() => callCount(calls) > 1, 1500),
      );
      expect(between.code, between.stderr).toBe(130);
      expect(await live()).toEqual([runName]);
      // still inside the wall-clock floor: a slow start is not a failure, nothing was stopped
      if (Date.now() - started < (NO_TELEMETRY_WALL_FLOOR_SECONDS - 30) * 1000)
        expect(between.stdout).not.toMatch(/"event":"(stopped|ended)"/);

      // while it stops the run: past the deadline the watch calls it failed and cancels its job
      // (scancel is slow); SIGINT then: the look ends as it began, the cancel done, the run ended and
      // recorded failed, so the watch has nothing left and exits 0
      const stop = slowCommand('scancel', 4);
      cleanup.push(stop.bin);
      const stopping = await watch(
        { PATH: `${stop.bin}:${process.env.PATH}` },
        interruptWhen(() => callCount(stop) > 0),
      );
      expect(callCount(stop), `the watch never cancelled the failed run: ${stopping.stdout}`).toBeGreaterThan(
        0,
      );
      expect(stopping.stderr).toContain('topo: interrupted: leaving Slurm in order');
      expect(stopping.code, stopping.stderr).toBe(0);
      expect((Date.now() - started) / 1000).toBeGreaterThanOrEqual(NO_TELEMETRY_WALL_FLOOR_SECONDS);
      const events = stopping.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { event: string; state: string; headline: string });
      expect(events.find((e) => e.event === 'stopped')?.state).toBe('failed');
      for (let i = 0; i < 40 && (await live()).length; i++) await sleep(250);
      expect(await live()).toEqual([]);

      // recorded failed with its reason; the next watch finds nothing to watch, nothing left held
      const record = JSON.parse(readFileSync(join(team.dir, 'experiments', `${team.id}.json`), 'utf8'));
      const baseline = record.runs.find((r: { name: string }) => r.name === 'baseline');
      expect(baseline.status).toBe('failed');
      expect(baseline.run_name).toBe(runName);
      expect(JSON.stringify(baseline)).toContain('no-telemetry');
      expect((await jobs()).filter((j) => j.reason === 'JobHeldUser')).toEqual([]);
      const again = await watch({});
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('');

      // topo submit of a candidate interrupted between `sbatch --hold` and the release: Ctrl-C cancels
      // the job it held (it never ran); the next watch neither watches nor records it (before, it
      // recorded the candidate rejected, and its next run's record was then refused)
      const hold = slowCommand('sbatch', 8, { after: true });
      cleanup.push(hold.bin);
      const submit = await spawnTopo(['submit', team.file('model'), '--cluster', 'local'], undefined, {
        cwd: team.dir,
        env: env({ PATH: `${hold.bin}:${process.env.PATH}` }),
        started: (child) => interruptWhen(() => callCount(hold) > 0)(() => child.kill('SIGINT')),
      });
      expect(submit.code, submit.stderr).toBe(130);
      expect(submit.stderr).toMatch(/the held job \d+ this submit made was cancelled \(it never ran\)/);
      for (let i = 0; i < 40 && (await live()).length; i++) await sleep(250);
      expect(await live()).toEqual([]);
      const after = await watch({});
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toBe('');
      const recorded = JSON.parse(readFileSync(join(team.dir, 'experiments', `${team.id}.json`), 'utf8'));
      expect(recorded.runs.map((r: { name: string }) => r.name)).toEqual(['baseline']);
      // none held: the cancelled one keeps the reason it had when it was cancelled, as Slurm records it
      expect((await jobs()).filter((j) => LIVE.includes(j.state) && j.reason === 'JobHeldUser')).toEqual([]);
    }, 900_000);
  });
