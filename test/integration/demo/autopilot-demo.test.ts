// `topo demo --autopilot` end to end (issue 42 item 1): the real CLI bundle, the local Slurm cluster
// with the twin, Prometheus, and the local GitHub API (dist/github-local.js, every request checked
// against @octokit/openapi). No command is typed after the demo starts: the monitor's passes open the
// baseline's and each round's pull requests, run them beside the round's reference job, decide, merge
// the winners and conclude. What the terminal printed (its rounds, decisions, GPU-hours, conclusion)
// must be what the record and the dashboard keep.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordedOutcome, roundOf } from '../../../src/autopilot/runs.js';
import { dashboardRows } from '../../../src/demo/autopilot-view.js';
import { recordProblems } from '../../../src/record/validate.js';
import type { ExperimentRecord } from '../../../src/types/generated/record.js';
import { type CliProcessRun, spawnTopo } from '../../support/cli-process.js';
import { clusterCommand, requireCluster } from '../../support/cluster.js';
import { bestProblems, dashboardFigures, figureProblems, recordFigures } from '../../support/one-truth.js';

/** The rounds the terminal printed: each candidate's first line under its `round N` header. */
function printedRounds(stdout: string): Map<string, number> {
  const rounds = new Map<string, number>();
  let round: number | null = null;
  for (const line of stdout.split('\n')) {
    const header = /^round (\d+)$/.exec(line);
    if (header) round = Number(header[1]);
    else if (line === 'baseline' || line.startsWith('concluded:')) round = null;
    const proposal = /^ {2}#\d+ ([\w.-]+): /.exec(line);
    if (proposal && round !== null && !rounds.has(proposal[1] as string))
      rounds.set(proposal[1] as string, round);
  }
  return rounds;
}

describe('topo demo --autopilot', () => {
  let out: string;
  let ran: CliProcessRun;
  let id: string;
  let record: ExperimentRecord;
  let dashboard: string;

  beforeAll(async () => {
    requireCluster();
    out = mkdtempSync(join(tmpdir(), 'topo-demo-autopilot-'));
    ran = await spawnTopo(['demo', '--autopilot', '--out', out]);
    id = readdirSync(join(out, 'topologies')).find((f) => f !== 'clusters.yaml') ?? '';
    record = JSON.parse(readFileSync(join(out, 'experiments', `${id}.json`), 'utf8')) as ExperimentRecord;
    // the dashboard's last version: what the issue says once the loop closed
    dashboard = readFileSync(join(out, 'dashboard.md'), 'utf8').split('\n\n---\n\n').at(-1) ?? '';
  }, 600_000); // under 4 minutes alone; a loaded 2-core machine takes longer

  it('closes the loop with no command typed: the baseline, rounds 1 and 2, each proposal and decision, the GPU-hours against the budget, the conclusion', () => {
    expect(ran.stderr, ran.stdout).toBe('');
    expect(ran.code, ran.stdout).toBe(0);
    expect(ran.stdout).toMatch(/^baseline$/m);
    expect(ran.stdout).toMatch(/^round 1$/m);
    expect(ran.stdout).toMatch(/^round 2$/m);
    expect(ran.stdout).toMatch(/^ {2}from the current best: /m);
    expect(ran.stdout).toMatch(/^ {2}GPU-hours: [\d.]+ of 150\.0 spent/m);
    expect(ran.stdout).toMatch(/^concluded: .+; winner: /m);
    expect(ran.stdout).toContain('the final report is posted on the dashboard, which closes');
    // the passes' cost in GitHub API requests, every one checked against GitHub's description
    expect(ran.stdout).toMatch(/^GitHub API: \d+ requests in \d+ passes \(\d+ reads, \d+ writes\)/m);
    expect(ran.stdout).toContain(`open ${out}/index.html`);
  });

  it('the rounds it printed are the record’s: each bot candidate in its round, with its decision and the reference it was decided against', () => {
    expect(recordProblems(record)).toEqual([]);
    const recorded = new Map(
      record.runs.flatMap((r) => {
        const round = roundOf(r.hypothesis);
        return round === null ? [] : [[r.name, round] as const];
      }),
    );
    expect(new Map([...recorded].sort()), ran.stdout).toEqual(new Map([...printedRounds(ran.stdout)].sort()));
    expect(new Set(recorded.values())).toEqual(new Set([1, 2]));
    const rows = dashboardRows(dashboard);
    for (const run of record.runs.filter((r) => recorded.has(r.name))) {
      const decision = run.monitor_decision;
      expect(decision, run.name).toBeDefined();
      // the terminal printed its decision, the dashboard's row shows the record's outcome
      expect(ran.stdout, run.name).toMatch(new RegExp(`^ {2}#\\d+ ${run.name}: .*(than|faster|slower)`, 'm'));
      // (its outcome as the campaign counts it: a run stopped still measuring, when the experiment
      // concluded on another, or closed at the horizon held, reads `undecided`)
      expect(rows.find((r) => r.name === run.name)?.decision, run.name).toBe(recordedOutcome(run));
      // every round's candidates were decided against a reference run beside them or the round's leader
      expect(['current best', 'baseline', 'leading candidate'], run.name).toContain(decision?.reference.role);
    }
  });

  it('the conclusion is the record’s and the dashboard’s: the winner is the current best, merged, with its final report', () => {
    const printed = /^concluded: (.+); winner: ([\w.-]*[\w-])/m.exec(ran.stdout);
    expect(printed, ran.stdout).not.toBeNull();
    const winner = printed?.[2] === 'none' ? null : (printed?.[2] ?? null);
    const best = record.current_best.topology;
    const base = record.runs.find((r) => !r.parent)?.name;
    expect(bestProblems(record)).toEqual([]);
    expect(winner ?? base, ran.stdout).toBe(best);
    expect(record.report?.concluded_at).toBeTruthy();
    expect(readFileSync(join(out, 'experiments', `${id}-report.md`), 'utf8')).toContain(best as string);
    expect(dashboard).toMatch(/\*\*Concluded:\*\* /);
    expect(dashboard).toContain(`**Best so far:** \`${best}\``);
    if (winner) {
      // merged into the default branch: the demo's checkout holds its file
      expect(readdirSync(join(out, 'topologies', id))).toContain(`${winner}.yaml`);
      const bestRun = record.runs.find((r) => r.name === winner);
      expect(bestRun?.pull_request?.merge_commit_sha).toBeTruthy();
    }
    // the GPU-hours the terminal printed last are the dashboard's
    const gpu = [...ran.stdout.matchAll(/GPU-hours: ([\d.]+) of ([\d.]+) spent/g)].at(-1);
    expect(dashboard).toContain(`**GPU-hours:** ${gpu?.[1]} spent`);
  });

  it('one number: the dashboard shows each run at the figure the record’s decision gives it', () => {
    expect(dashboardFigures(dashboard).length).toBeGreaterThanOrEqual(record.runs.length);
    expect(figureProblems(record, [...recordFigures(record), ...dashboardFigures(dashboard)])).toEqual([]);
  });

  it('leaves no Slurm job of the experiment pending or running', () => {
    const live = clusterCommand(['squeue', '--noheader', '--format=%j %T'])
      .split('\n')
      .filter((l) => l.startsWith(`topo-${id}-`));
    expect(live).toEqual([]);
  });
});
