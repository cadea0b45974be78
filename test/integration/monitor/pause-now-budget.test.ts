// Issue 40 item 6 (high): the budget charged Slurm's forecast. A live job's EndTime is its start plus
// its time limit (even while PENDING), so after a `/topo pause --now` and a `/topo resume` the
// dashboard said "320 of 400" for under a minute of running. Here the monitor's own pass (its ports
// over the local GitHub API and a private Slurm cluster WITH accounting, every stage and the
// autopilot's) opens round 1 and runs it, a writer pauses it with --now (its jobs are cancelled) and
// resumes it (it runs again), pauses again, and the dashboard's GPU-hours spent must be what Slurm's
// accounting says the allocations held: elapsed × GPUs over every job, within one run-minute per run.
// Issue 42: the round's reference job (a run of the baseline beside the candidates) is stopped by the
// pause too, started again for the resumed round, and stopped again: none is left charging.
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildMonitorPorts } from '../../../actions/monitor/ports.js';
import { dashboardMarker } from '../../../src/autopilot/dashboard.js';
import { autopilot } from '../../../src/monitor/autopilot.js';
import { runStages, STAGES, withStage } from '../../../src/monitor/pass.js';
import { newPassState } from '../../../src/monitor/state.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import { clusterCommand } from '../../support/cluster.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { type PrivateCluster, startPrivateCluster } from '../../support/private-cluster.js';
import { createExperimentRepo, EXPERIMENT_ID } from '../suggest/experiment-repo.js';

const { gh, octokit } = useLocalGitHub();
let cluster: PrivateCluster;
beforeAll(() => {
  cluster = startPrivateCluster({ accounting: true });
}, 240_000);
afterAll(() => cluster?.stop());

const sleep = (s: number) => new Promise((r) => setTimeout(r, s * 1000));

/** Every allocation accounting holds of the experiment: job id, name, state, seconds held and GPUs. */
function allocations(): Array<{ id: string; name: string; state: string; seconds: number; gpus: number }> {
  const out = clusterCommand(
    [
      'sacct',
      '--noheader',
      '--parsable2',
      '--allocations',
      '--duplicates',
      '--starttime=now-1hours',
      '--format=JobID,JobName%200,State,ElapsedRaw,AllocTRES',
    ],
    15_000,
    cluster.env,
  );
  return out
    .split('\n')
    .map((l) => l.split('|'))
    .filter(([, name]) => name?.startsWith(`topo-${EXPERIMENT_ID}-`))
    .map(([id, name, state, elapsed, tres]) => ({
      id: id as string,
      name: name as string,
      state: state as string,
      seconds: Number(elapsed),
      gpus: Number(/gres\/gpu=(\d+)/.exec(tres ?? '')?.[1] ?? 0),
    }));
}

/** The dashboard's GPU-hours spent (one decimal, as it prints them). */
function spentOn(body: string | null | undefined): number {
  const m = /\*\*GPU-hours:\*\* ([\d.]+) spent/.exec(body ?? '');
  if (!m) throw new Error(`no GPU-hours line on the dashboard:\n${body}`);
  return Number(m[1]);
}

describe('the budget across /topo pause --now and /topo resume, with accounting', () => {
  it('charges what the allocations held (elapsed × GPUs), never Slurm’s forecast end', async () => {
    const checkout = createExperimentRepo('twin-renderer-bound');
    // the private cluster's own `local` (its twin checkout, run folder, Prometheus, a 30-minute limit)
    copyFileSync(cluster.env.clustersFile, join(checkout.dir, 'topologies/clusters.yaml'));
    checkout.addRun('baseline', null, {}, 'accepted');
    const policy = { enabled: true, gpu_hours: 400, parallel: 2, max_rounds: 3 };
    const experiment = { ...checkout.experiment, autopilot: policy } as Experiment;
    writeFileSync(join(checkout.dir, 'topologies', EXPERIMENT_ID, 'experiment.yaml'), stringify(experiment));
    const repo = gh.createRepo('acme/budget', { files: checkout.files() });
    gh.addCollaborator(repo, 'alice', 'write');
    const config = {
      workspace: checkout.dir,
      topologiesDir: 'topologies',
      clustersFile: 'topologies/clusters.yaml',
      owner: 'acme',
      repo: 'budget',
      botLogin: gh.botLogin,
      env: { ...process.env, SLURM_CONF: cluster.env.slurmConf },
      log: () => {},
    };
    const stages = withStage(STAGES, { name: 'autopilot', run: autopilot }, { after: 'decide' });
    const pass = async () => {
      const ports = buildMonitorPorts(octokit, config);
      try {
        const state = await runStages(newPassState({ tickSeconds: 60 }), ports, stages);
        const e = state.experiments.find((x) => x.id === EXPERIMENT_ID);
        expect(e?.failed, e?.failed?.message).toBeUndefined();
        return e;
      } finally {
        await ports.close();
      }
    };
    const dashboard = () =>
      gh.state.itemsOf(repo).find((i) => i.isIssue && i.body?.startsWith(dashboardMarker(EXPERIMENT_ID)));
    const live = () => allocations().filter((a) => a.state === 'RUNNING' || a.state === 'PENDING');
    // the round's reference job is a run of the best (the baseline), beside the candidates
    const candidates = () => live().filter((a) => !a.name.includes('-baseline-'));
    /** Waits until accounting (which hears a moment late) says `done`. */
    const until = async (what: string, done: () => boolean) => {
      for (let i = 0; i < 150 && !done(); i++) await sleep(0.2);
      expect(done(), `${what}: ${JSON.stringify(live())}`).toBe(true);
    };
    const references = () => live().filter((a) => a.name.includes('-baseline-'));
    const allRunning = () =>
      until(
        'all running, the reference job beside the candidates',
        () =>
          candidates().length > 0 && references().length === 1 && live().every((a) => a.state === 'RUNNING'),
      );
    // issue 42: the reference job stops with them (it kept running, and charging, after the pause)
    const allStopped = () => until('candidates and reference stopped', () => live().length === 0);
    const command = async (body: string) => {
      gh.comment(repo, dashboard()?.number as number, 'alice', body);
      await pass();
    };

    await pass(); // round 1 opened: its pull requests and the dashboard
    await pass(); // their Requests
    const before = spentOn(dashboard()?.body); // the record's runs only: nothing held yet
    expect(allocations()).toEqual([]);
    await pass(); // submitted: the round's candidates and its reference job (a run of the best)
    await allRunning();
    await sleep(8);
    await command('/topo pause --now'); // the running candidates and the reference job are cancelled
    await allStopped();
    await pass(); // paused: nothing starts again, the reference job neither
    await sleep(1);
    expect(live()).toEqual([]);
    await command('/topo resume'); // the stopped runs are requested again
    await pass(); // and submitted
    await pass(); // the round asks for its reference again, and it runs beside them
    // charged Slurm's forecast (start + the 30-minute limit), two runs spent the 400 and it concluded
    expect(dashboard()?.body).not.toContain('**Concluded:**');
    await allRunning();
    await sleep(8);
    await command('/topo pause --now');
    await allStopped();
    await pass();

    const held = allocations();
    expect(held.length).toBeGreaterThanOrEqual(4); // at least two jobs before the pause, two after
    // the reference job ran in each half, and was stopped each time (none ended by its own limit)
    const referenceStates = held.filter((a) => a.name.includes('-baseline-')).map((a) => a.state);
    expect(referenceStates).toHaveLength(2);
    for (const state of referenceStates) expect(state).toMatch(/^CANCELLED/); // `CANCELLED by 0`
    for (const a of held) expect(a.gpus, `job ${a.id}`).toBeGreaterThan(0);
    // elapsed × GPUs in run-hours (the cluster's time scale), as Slurm's accounting holds them
    const truth = held.reduce((sum, a) => sum + (a.seconds * a.gpus * cluster.env.timeScale) / 3600, 0);
    const charged = spentOn(dashboard()?.body) - before;
    // one run-minute of each run's GPUs (a second of the twin's clock), and the dashboard's rounding
    const slack = held.reduce((sum, a) => sum + a.gpus / 60, 0) + 0.1;
    console.log(
      `charged ${charged.toFixed(1)} GPU-hours; held ${truth.toFixed(2)} over ${held.length} allocations`,
    );
    expect(Math.abs(charged - truth), `charged ${charged}, held ${truth}`).toBeLessThanOrEqual(slack);
    expect(dashboard()?.body).not.toContain('**Concluded:**');
  }, 600_000);
});
