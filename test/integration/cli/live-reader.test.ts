// One live reader (issue 41 item 3) on the local cluster: a team's baseline and two candidates on the
// twin, read by `topo jobs`, `topo status`, `topo analyze` and `topo watch`. While the candidate
// runs, the run name `jobs` prints is one `analyze` takes, and `analyze` names its RUNNING Slurm job
// (before: `jobs` printed the name's tail, and `analyze` said "No Slurm job"); `status` shows no
// zero-width interval (before: `10.93 [10.93, 10.93]` for a reading) and names a decision's
// reference once (before: "reference vs baseline baseline"). Once the runs ended, the same moment
// for every reader, `status --json`, `analyze --json` and `watch --json` say the same decision
// (state, reference, change) and figure for each run (watch's figure, its seconds_per_rollout: before,
// watch printed none).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { requireCluster } from '../../support/cluster.js';
import { requireTwinBundle } from '../../support/twin-job.js';
import { type Team, teamExperiment, waitEnded } from './team.js';

const cluster = requireCluster();
const CANDIDATES = ['baseline', 'model', 'scale-driver'];
let team: Team;
const topo = (...args: string[]) =>
  runTopo(args, team.dir, {
    ...process.env,
    TOPO_CLUSTERS_FILE: cluster.clustersFile,
    SLURM_CONF: cluster.slurmConf,
  });

interface StatusRow {
  candidate: string;
  run_name: string;
  job_id: string;
  slurm_state: string;
  decision: { state: string; reference: unknown; relative_change: unknown } | null;
  seconds_per_rollout: { value: number; low: number | null; high: number | null; basis: string } | null;
}

const status = async (): Promise<StatusRow[]> => {
  const r = await topo('status', team.id, '--json');
  expect(r.code, r.stderr).toBe(0);
  const doc = JSON.parse(r.stdout);
  expect(cliSchemaErrors('status', doc)).toEqual([]);
  return doc.candidates as StatusRow[];
};

beforeAll(() => {
  requireTwinBundle();
  team = teamExperiment('live');
});
afterAll(async () => {
  if (!team) return;
  for (const c of CANDIDATES) await topo('cancel', team.file(c));
  rmSync(team.dir, { recursive: true, force: true });
});

describe('one live reader: jobs, status, analyze and watch read a run alike', () => {
  const runs: Record<string, string> = {};

  it('while a candidate runs: analyze takes the run name jobs prints and names its Slurm job', async () => {
    for (const c of CANDIDATES) {
      const r = await topo('submit', team.file(c), '--json');
      expect(r.code, r.stderr).toBe(0);
      runs[c] = JSON.parse(r.stdout).job_name;
    }
    // until the candidate has data of its own, as status reads it
    let rows: StatusRow[] = [];
    for (let i = 0; i < 90; i++) {
      rows = await status();
      const model = rows.find((r) => r.candidate === 'model');
      if (model?.slurm_state === 'RUNNING' && model.seconds_per_rollout) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const model = rows.find((r) => r.candidate === 'model') as StatusRow;
    expect(model.slurm_state).toBe('RUNNING');

    const table = (await topo('jobs', team.id)).stdout;
    const line = table.split('\n').find((l) => l.startsWith(`${model.job_id} `)) ?? '';
    const printed = line.split(/\s+/).find((w) => w.startsWith('topo-'));
    expect(printed, table).toBe(runs.model);
    const analyzed = await topo('analyze', printed as string);
    expect(analyzed.code, analyzed.stderr).toBe(0);
    expect(analyzed.stdout).toContain(`Slurm job ${model.job_id}`);
    expect(analyzed.stdout).not.toContain('No Slurm job');

    // no zero-width interval, in the table or in --json; a reference named once
    const text = (await topo('status', team.id)).stdout;
    expect(text).not.toMatch(/(\d+(?:\.\d+)?) \[\1, \1\]/);
    expect(text).not.toMatch(/baseline baseline/);
    for (const r of rows) {
      const f = r.seconds_per_rollout;
      if (f && f.low !== null) expect(f.high as number, JSON.stringify(f)).toBeGreaterThan(f.low);
      if (f?.basis === 'reading') expect(f.low).toBeNull();
    }
  }, 300_000);

  it('once the runs ended, status, analyze and watch say the same decision and figure', async () => {
    await waitEnded(topo, team.id, CANDIDATES.length, 600_000);
    const rows = await status();
    const watched = await topo('watch', team.id, '--json', '--no-record', '--interval', '1');
    expect(watched.code, watched.stderr).toBe(0);
    const events = watched.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    for (const c of ['model', 'scale-driver']) {
      const row = rows.find((r) => r.candidate === c) as StatusRow;
      expect(row.decision, c).not.toBeNull();
      const r = await topo('analyze', runs[c] as string, '--json');
      expect(r.code, r.stderr).toBe(0);
      const d = JSON.parse(r.stdout).observation.decision;
      const said = { state: d.state, reference: d.reference, relative_change: d.relative_change };
      expect(said, `${c}: analyze vs status`).toEqual(row.decision);
      // a settled decision carries the figure status shows for the run
      if (d.figure)
        expect(row.seconds_per_rollout, c).toMatchObject({ value: d.figure.value, basis: 'decision' });
      const seen = events.filter((e) => e.candidate === c && e.decision).at(-1);
      expect(seen?.decision, `${c}: watch vs status`).toEqual(row.decision);
      // and the same figure: watch takes its judgement's, as status does (issue 39 item 6)
      expect(seen?.seconds_per_rollout, `${c}: watch's figure vs status'`).toEqual(row.seconds_per_rollout);
    }
  }, 900_000);
});
