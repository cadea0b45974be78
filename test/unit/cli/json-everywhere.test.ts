// Every command takes --json (issue 35): its document follows schemas/cli/<command>.schema.json, and
// stdout holds that one document only (progress and notes are diagnostics, on stderr).
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands/index.js';
import { runTopo } from '../../support/cli.js';
import { cliSchemaErrors } from '../../support/cli-schemas.js';
import { repoRoot } from '../../support/run-action.js';

const EXP = 'topology-opt-vavam-ord-20261202';

function checkout(autopilot = false): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-json-'));
  cpSync(join(repoRoot, 'topologies'), join(dir, 'topologies'), { recursive: true });
  cpSync(join(repoRoot, 'experiments'), join(dir, 'experiments'), { recursive: true });
  if (autopilot) {
    const exp = join(dir, 'topologies', EXP, 'experiment.yaml');
    writeFileSync(exp, `${readFileSync(exp, 'utf8')}autopilot:\n  enabled: true\n  gpu_hours: 120\n`);
    // not concluded yet: the worked example's record carries its final report
    const record = join(dir, 'experiments', `${EXP}.json`);
    writeFileSync(record, JSON.stringify({ ...JSON.parse(readFileSync(record, 'utf8')), report: null }));
  }
  return dir;
}

/** The one document on stdout, checked against the command's schema. */
async function jsonOf(name: string, args: string[], cwd: string) {
  const r = await runTopo([...args, '--json'], cwd, {});
  expect(r.code, r.stderr).toBe(0);
  const doc = JSON.parse(r.stdout);
  expect(cliSchemaErrors(name, doc)).toEqual([]);
  expect(doc.schema_version).toBe(1);
  return doc;
}

describe('--json on every command', () => {
  it('every command declares --json', () => {
    const without = commands.filter((c) => !c.help.options.some((o) => o.name === 'json')).map((c) => c.name);
    expect(without).toEqual([]);
  });

  it('init, report, site: what they wrote, as one document', async () => {
    const dir = checkout();
    const init = await jsonOf(
      'init',
      [
        'init',
        '--command',
        'sbatch --account=a --partition=p --time=03:59:00 src/tools/run-on-slurm/submit.sh deploy=ord topology=8gpu_64rollouts driver=vavam',
        '--date',
        '20261230',
      ],
      dir,
    );
    expect(init.files).toContain(`topologies/${init.experiment_id}/experiment.yaml`);
    expect(init.next).toBe(`topo validate topologies/${init.experiment_id}`);
    const report = await jsonOf('report', ['report', EXP, '--out', 'r.md'], dir);
    expect(report).toMatchObject({ experiment_id: EXP, out: 'r.md' });
    expect(readFileSync(join(dir, 'r.md'), 'utf8')).toBe(report.markdown);
    const site = await jsonOf('site', ['site', '--out', 'site'], dir);
    expect(site.pages).toContain('index.html');
  });

  it('autopilot status and plan', async () => {
    const dir = checkout(true);
    const status = await jsonOf('autopilot', ['autopilot', 'status', EXP], dir);
    expect(status).toMatchObject({ subcommand: 'status', experiment_id: EXP });
    expect(status.dashboard).toContain('GPU-hours');
    const plan = await jsonOf('autopilot', ['autopilot', 'plan', EXP], dir);
    const open = plan.actions.find((a: { kind: string }) => a.kind === 'open');
    expect(open.proposals[0].branch).toMatch(new RegExp(`^topo/autopilot/${EXP}/`));
  });

  it('sim steady', async () => {
    const doc = await jsonOf('sim', ['sim', 'steady', '--topology', '1gpu'], repoRoot);
    expect(Object.keys(doc).length).toBeGreaterThan(1);
  });

  it('a report written to a file says so on stdout (the result), as setup, init and site do', async () => {
    const r = await runTopo(['report', EXP, '--out', 'r.md'], checkout(), {});
    expect(r.stdout).toBe(`wrote the final report of ${EXP} to r.md\n`);
    expect(r.stderr).toBe('');
  });
});
