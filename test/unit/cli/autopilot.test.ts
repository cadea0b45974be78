// `topo autopilot status|plan` on a copy of the worked example with an autopilot block: status is
// the dashboard's text from the same plan, plan shows the next round's proposals on their bot
// branches, and neither writes a file.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDashboard } from '../../../src/autopilot/dashboard.js';
import { dashboardHelp } from '../../../src/commands/help.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { planFor, readAutopilot } from '../../../src/usecases/autopilot.js';
import { fileSystemSource } from '../../../src/usecases/validate.js';
import { runTopo } from '../../support/cli.js';
import { repoRoot } from '../../support/run-action.js';

const EXP = 'topology-opt-vavam-ord-20261202';
let dir: string;

const listing = (d: string): string[] => readdirSync(d, { recursive: true, encoding: 'utf8' }).sort();

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'topo-autopilot-'));
  cpSync(join(repoRoot, 'topologies'), join(dir, 'topologies'), { recursive: true });
  cpSync(join(repoRoot, 'experiments'), join(dir, 'experiments'), { recursive: true });
  const exp = join(dir, 'topologies', EXP, 'experiment.yaml');
  writeFileSync(exp, `${readFileSync(exp, 'utf8')}autopilot:\n  enabled: true\n  gpu_hours: 120\n`);
  // Not concluded yet: the worked example's record carries its final report.
  const record = join(dir, 'experiments', `${EXP}.json`);
  const r = JSON.parse(readFileSync(record, 'utf8'));
  r.report = null;
  writeFileSync(record, `${JSON.stringify(r, null, 2)}\n`);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('topo autopilot', () => {
  it('status prints the dashboard the plan gives, with the recorded runs and the budget', async () => {
    const run = await runTopo(['autopilot', 'status', EXP], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const { runs, plan } = planFor(await readAutopilot(fileSystemSource(dir), EXP));
    expect(run.stdout.startsWith(`${renderDashboard(EXP, runs, plan, dashboardHelp(COMMANDS))}\n`)).toBe(
      true,
    );
    // it says what it read: the record alone, without --repo
    expect(run.stdout).toContain('From the record on this checkout only');
    expect(run.stdout).toContain('`renderer-split`, 4.');
    expect(run.stdout).toMatch(
      /\*\*GPU-hours:\*\* 20\.8 spent, 0\.0 committed to live runs, 99\.2 left of 120\.0\./,
    );
    expect(run.stdout).toContain(
      '- open round 1: up to 3 proposal(s) of `topo suggest` from `renderer-split`',
    );
  });

  it('plan shows the proposals on their bot branches with the round, and writes nothing', async () => {
    const before = listing(dir);
    const run = await runTopo(['autopilot', 'plan', EXP], dir);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`topo/autopilot/${EXP}/[a-z0-9-]+ {2}\\(topologies/${EXP}/`));
    expect(run.stdout).toContain('hypothesis: Autopilot round 1: ');
    expect(listing(dir)).toEqual(before);
  });

  it('on a fresh experiment, no recorded baseline reads as not measured yet, never as failed', async () => {
    const fresh = mkdtempSync(join(tmpdir(), 'topo-autopilot-fresh-'));
    try {
      cpSync(join(dir, 'topologies'), join(fresh, 'topologies'), { recursive: true });
      const run = await runTopo(['autopilot', 'status', EXP], fresh);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toContain('failed');
      expect(run.stdout).toContain('**Best so far:** none yet: no baseline is recorded');
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('lists a run at its decision the record keeps (worse), not at its older comparison (indistinguishable)', async () => {
    const record = join(dir, 'experiments', `${EXP}.json`);
    const text = readFileSync(record, 'utf8');
    const r = JSON.parse(text);
    const run = r.runs.find((x: { status: string }) => x.status === 'rejected');
    run.comparison = {
      ...(run.comparison ?? { against: 'baseline baseline' }),
      outcome: 'indistinguishable',
    };
    run.monitor_decision = {
      against: 'baseline baseline',
      min_improvement: 0.02,
      method: 'one-sided group-sequential boundaries',
      state: 'worse',
      evidence: ['decided worse than the baseline'],
      gpu_minutes_used: 368,
      gpu_minutes_saved: null,
      gpu_minutes_saved_vs_seed: null,
    };
    writeFileSync(record, `${JSON.stringify(r, null, 2)}\n`);
    try {
      const out = await runTopo(['autopilot', 'status', EXP], dir);
      expect(out.code, out.stderr).toBe(0);
      const row = out.stdout.split('\n').find((l) => l.includes(`\`${run.name}\``));
      expect(row).toMatch(/\| worse \|/);
    } finally {
      writeFileSync(record, text);
    }
  });

  it("plan's proposals name their parent at the figure status shows (its decision's), not its verdict's own projection", async () => {
    const record = join(dir, 'experiments', `${EXP}.json`);
    const text = readFileSync(record, 'utf8');
    const r = JSON.parse(text);
    const parent = r.runs.find((x: { name: string }) => x.name === 'renderer-split');
    // decided 15% faster than the baseline (5.25): its figure is 4.46, its own projection 4.65
    parent.monitor_decision = {
      ...parent.monitor_decision,
      relative_change: { value: -0.15, low: -0.165, high: -0.135 },
      figure: { value: 4.4642, low: 4.3854, high: 4.543, reference_value: 5.252 },
    };
    writeFileSync(record, `${JSON.stringify(r, null, 2)}\n`);
    try {
      const status = await runTopo(['autopilot', 'status', EXP], dir);
      expect(status.code, status.stderr).toBe(0);
      const row = status.stdout.split('\n').find((l) => l.startsWith('|') && l.includes('`renderer-split`'));
      expect(row).toContain('| 4.46 |');
      const plan = await runTopo(['autopilot', 'plan', EXP], dir);
      expect(plan.code, plan.stderr).toBe(0);
      expect(plan.stdout).toContain('(parent renderer-split: 4.46 s/rollout)');
      expect(plan.stdout).not.toContain('4.65 s/rollout');
    } finally {
      writeFileSync(record, text);
    }
  });

  it('refuses an experiment without a policy, or a wrong subcommand, with what would be right', async () => {
    const none = await runTopo(['autopilot', 'status', 'topology-opt-nope-20260101'], dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('not found');
    const exp = join(dir, 'topologies', EXP, 'experiment.yaml');
    const text = readFileSync(exp, 'utf8');
    writeFileSync(exp, text.replace(/autopilot:[\s\S]*$/, ''));
    try {
      const bare = await runTopo(['autopilot', 'plan', EXP], dir);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('has no autopilot block');
    } finally {
      writeFileSync(exp, text);
    }
    const usage = await runTopo(['autopilot', 'start', EXP], dir);
    expect(usage.stderr).toContain('status or plan');
  });
});
