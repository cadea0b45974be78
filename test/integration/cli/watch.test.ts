// `topo watch` on the local cluster, with accounting and without (issue 41 item 1): a team without
// GitHub submits a baseline, a candidate the twin runs clearly faster (`model`) and one it runs
// slower (`scale-driver`), and watches them. The first watch is interrupted (Ctrl-C, as the CLI's
// first SIGINT aborts it) after its first event: it leaves every run as it is and exits 130. A second
// watch resumes: it stops each candidate at its decision (stop_when_decided), prints each decision as
// its pull request comment's headline (one --json object per event), records all three as the record
// workflow would (the baseline and the winner accepted, the loser rejected) and exits 0 with nothing
// left running or held. Before, `topo watch` was an unknown command (exit 2).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { parseRecord } from '../../../src/record/validate.js';
import { type CliRun, runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import type { LocalClusterEnv } from '../../support/cluster.js';
import { type WatchLine, watchFigureProblems, watchFigures } from '../../support/one-truth.js';
import { accountingVariants } from '../../support/private-cluster.js';
import { requireTwinBundle } from '../../support/twin-job.js';
import { type Team, teamEnv, teamExperiment, teamJobs } from './team.js';

const variants = accountingVariants();
const CANDIDATES = ['baseline', 'model', 'scale-driver'];

interface WatchEvent {
  event: string;
  candidate: string;
  run_name: string;
  state: string;
  decision: { state: string } | null;
  headline: string;
  record: { status: string } | null;
}

/** `topo watch` in-process with a Ctrl-C of its own: `interruptWhen` sees stdout so far. */
async function watch(
  team: Team,
  env: NodeJS.ProcessEnv,
  interruptWhen?: (stdout: string) => boolean,
): Promise<CliRun> {
  const controller = new AbortController();
  let stdout = '';
  let stderr = '';
  const io: CliIO = {
    stdout: (t) => {
      stdout += t;
      if (interruptWhen?.(stdout)) controller.abort();
    },
    stderr: (t) => {
      stderr += t;
    },
    cwd: team.dir,
    env,
    isTTY: false,
    interrupts: () => ({ signal: controller.signal, release() {} }),
  };
  const code = await main(['watch', team.id, '--json', '--interval', '2'], io);
  return { code, stdout, stderr };
}

const events = (stdout: string): WatchEvent[] =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as WatchEvent);

for (const variant of variants)
  describe(`topo watch decides, stops and records a team's runs, ${variant.label}`, () => {
    let team: Team;
    let cluster: LocalClusterEnv;
    const env = () => teamEnv(cluster);
    const topo = (...args: string[]) => runTopo(args, team.dir, env());
    const jobs = () => teamJobs(team, env());
    afterAll(async () => {
      if (!team) return;
      for (const c of CANDIDATES) await topo('cancel', team.file(c));
      rmSync(team.dir, { recursive: true, force: true });
    });

    it('Ctrl-C leaves the runs as they are; a second watch resumes, decides, stops, records and exits 0', async () => {
      requireTwinBundle();
      cluster = variant.env();
      team = teamExperiment(`watch${variant.accounting ? 'a' : 'n'}`);
      const runs: Record<string, string> = {};
      for (const c of CANDIDATES) {
        const r = await topo('submit', team.file(c), '--json');
        expect(r.code, r.stderr).toBe(0);
        runs[c] = JSON.parse(r.stdout).job_name;
      }

      const first = await watch(team, env(), (out) => out.includes('\n'));
      expect(first.code, first.stderr).toBe(130);
      expect(first.stderr).toContain(`\`topo watch ${team.id}\` resumes`);
      expect(existsSync(join(team.dir, '.topo', 'watch', `${team.id}.json`))).toBe(true);
      // an interrupted watch stopped nothing it had not decided, and recorded nothing
      const stopped = events(first.stdout)
        .filter((e) => e.event === 'stopped')
        .map((e) => e.run_name);
      const live = (await jobs()).filter((j) => ['PENDING', 'RUNNING'].includes(j.state)).map((j) => j.name);
      expect(live.sort()).toEqual(
        Object.values(runs)
          .filter((r) => !stopped.includes(r))
          .sort(),
      );

      const second = await watch(team, env());
      expect(second.code, second.stderr).toBe(0);
      const all = [...events(first.stdout), ...events(second.stdout)];
      for (const e of all) expect(cliSchemaErrors('watch', e)).toEqual([]);
      // a candidate faster at equal run age is first the provisional winner (better-at-equal-age): its
      // job runs on until the full-run guard settles, then its final decision is a second event
      const decisions = (c: string) => all.filter((e) => e.candidate === c && e.event === 'decided');
      const decided = (c: string) => decisions(c).at(-1);
      expect(decided('model')?.decision?.state).toBe('better');
      const model = all.filter((e) => e.candidate === 'model').map((e) => e.decision?.state ?? e.event);
      const stoppedAt = all.findIndex((e) => e.candidate === 'model' && e.event === 'stopped');
      const finalAt = all.indexOf(decided('model') as WatchEvent);
      expect(stoppedAt, model.join(' ')).toBeGreaterThan(finalAt);
      for (const e of decisions('model').slice(0, -1)) expect(e.decision?.state).toBe('better-at-equal-age');
      expect(decided('model')?.headline).toMatch(/model: better than .*baseline.* by [\d.]+%/);
      expect(['worse', 'not-better']).toContain(decided('scale-driver')?.decision?.state);
      // each candidate stopped at its decision, the baseline ran to its end
      for (const c of ['model', 'scale-driver'])
        expect(all.some((e) => e.candidate === c && e.event === 'stopped')).toBe(true);
      const ended = Object.fromEntries(
        all.filter((e) => e.event === 'ended').map((e) => [e.candidate, e.state]),
      );
      expect(ended).toEqual({ baseline: 'finished', model: 'stopped', 'scale-driver': 'stopped' });

      // recorded as the record workflow records merged and closed pull requests
      const recorded = Object.fromEntries(
        all.filter((e) => e.event === 'recorded').map((e) => [e.candidate, e.record?.status]),
      );
      expect(recorded).toEqual({ baseline: 'accepted', model: 'accepted', 'scale-driver': 'rejected' });
      const record = JSON.parse(readFileSync(join(team.dir, 'experiments', `${team.id}.json`), 'utf8'));
      expect(record.current_best.topology).toBe('model');
      expect(record.runs.find((r: { name: string }) => r.name === 'model').run_name).toBe(runs.model);
      expect(existsSync(join(team.dir, 'experiments', `${team.id}.md`))).toBe(true);
      // each figure watch printed for a run once it settled (--json and text) and the record step it
      // wrote are the judgement it stored: the record's monitor_decision and its figure (issue 39 item 6)
      const md = readFileSync(join(team.dir, 'experiments', `${team.id}.md`), 'utf8');
      const lines = [...first.stdout.split('\n'), ...second.stdout.split('\n')]
        .filter(Boolean)
        .map((l) => JSON.parse(l) as WatchLine);
      const stored = parseRecord(JSON.stringify(record), `${team.id}.json`);
      const shown = new Set(watchFigures(lines, stored).map((f) => `${f.surface} ${f.run}`));
      // a loser pruned against model while model measured is printed again once model settles
      // (refigured): its lines before were anchored on model's estimate then (src/analysis/figure.ts)
      for (const c of CANDIDATES)
        for (const surface of shown.has(`watch --json refigured ${c}`)
          ? ['watch --json refigured', 'watch refigured']
          : ['watch --json ended', 'watch ended', 'watch --json recorded'])
          expect(shown, `${surface} ${c}`).toContain(`${surface} ${c}`);
      expect(watchFigureProblems(lines, stored, md)).toEqual([]);

      // nothing left running or held; report and suggest read the record
      expect((await jobs()).filter((j) => ['PENDING', 'RUNNING'].includes(j.state))).toEqual([]);
      expect((await jobs()).filter((j) => j.reason === 'JobHeldUser')).toEqual([]);
      expect((await topo('report', team.id)).stdout).toMatch(/\*\*Result:\*\* .*`model`/);
      const again = await watch(team, env());
      expect(again.code).toBe(0);
      expect(again.stdout).toBe('');
    }, 900_000);
  });
