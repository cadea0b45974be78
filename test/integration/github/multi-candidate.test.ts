import { describe, expect, it } from 'vitest';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const candidate = workersCandidate;
const t = useActionTestbed({
  tag: 'mul',
  experiment: { maxParallel: 3 },
  pulls: {
    'two-ideas': {
      title: 'two ideas',
      files: {
        'alpha.yaml': candidate('alpha', 10),
        'bravo.yml': candidate('bravo', 12),
        'broken.yaml': 'name: broken\ntopology:\n  services:\n    driver:\n      gpus: [0, 99]\n',
      },
    },
  },
});
const pull = () => t.pull('two-ideas');
const command = async (body: string) => {
  const run = await t.command(pull(), body);
  return { outcome: run.outputs.outcome, reply: run.reply };
};
const live = (name: string) => t.live(name);
const sticky = (purpose: string) => t.sticky(pull(), purpose);
const runName = (name: string) => t.runName(name);

describe('a pull request with several candidates', () => {
  let alphaJob = '';
  let bravoName = '';

  it('/topo submit submits each valid candidate as its own run and answers for the invalid one', async () => {
    const { outcome, reply } = await command('/topo submit');
    expect(outcome).toBe('done');
    const [alpha, bravo] = [await live('alpha'), await live('bravo')];
    expect(alpha).toHaveLength(1);
    expect(bravo).toHaveLength(1);
    alphaJob = alpha[0]?.id ?? '';
    bravoName = bravo[0]?.name ?? '';
    expect(alpha[0]?.name).toMatch(runName('alpha'));
    expect(bravoName).toMatch(runName('bravo'));
    expect(await live('broken')).toEqual([]);
    expect(reply).toMatch(/alpha-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(reply).toMatch(/bravo-[0-9a-f]{8}-[0-9a-f]{8}` submitted as Slurm job/);
    expect(reply).toMatch(/broken\.yaml` does not pass validation[\s\S]*\[gpu-index\]/);
    expect(sticky('submit-alpha')).toContain('### Submission of `alpha`');
    expect(sticky('submit-bravo')).toContain('### Submission of `bravo`');
    expect(sticky('lifecycle').match(/\| submitted \|/g)).toHaveLength(2);
    expect(pull().labels).toContain('topology:running');
  });

  it('/topo submit <candidate> names one of the pull request’s candidates, or is refused', async () => {
    const { outcome, reply } = await command('/topo submit charlie');
    expect(outcome).toBe('refused');
    expect(reply).toContain('no candidate `charlie`; its candidates are `alpha`, `bravo`, `broken`');
    const again = await command('/topo submit alpha');
    expect(again.outcome).toBe('done');
    expect(again.reply).toMatch(/alpha.*already running as Slurm job/);
    expect(again.reply).not.toContain('bravo');
    expect((await live('alpha')).map((j) => j.id)).toEqual([alphaJob]);
  });

  it('the monitor follows each candidate’s run', async () => {
    const pass = await t.monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
    const alphaName = (await live('alpha'))[0]?.name;
    expect(Object.keys(states).sort()).toEqual([alphaName, bravoName].sort());
    // each candidate's own comment shows its own run (they no longer overwrite one `monitor` comment)
    expect(parseObservationBlock(sticky('monitor-alpha'))?.run_name).toBe(alphaName);
    expect(parseObservationBlock(sticky('monitor-bravo'))?.run_name).toBe(bravoName);
    expect(sticky('monitor')).toBe('');
    // one check run on the head, over both candidates (the name branch protection requires)
    const checks = t.gh.state.checkRuns.filter((r) => r.repo === t.repo && r.headSha === pull().head.sha);
    expect(checks.map((r) => r.name)).toEqual(['topo/monitor']);
    expect(checks[0]?.output.title).toMatch(/^2 candidates: (alpha|bravo): .*; (alpha|bravo): /);
    expect(checks[0]?.output.summary).toContain('### `alpha`');
    expect(checks[0]?.output.summary).toContain('### `bravo`');
    expect(pull().labels.filter((l) => l.startsWith('topology:'))).toEqual(['topology:running']);
  });

  it('/topo status answers for both candidates and refreshes both comments', async () => {
    const before = sticky('monitor-bravo');
    const { outcome, reply } = await command('/topo status');
    expect(outcome).toBe('done');
    expect(reply).toContain("2 candidates; each one's monitor comment is up to date:");
    expect(reply).toMatch(new RegExp(`- \`alpha\`: \`${runName('alpha').source}\` is \\*\\*\\w+\\*\\*`));
    expect(reply).toContain(`- \`bravo\`: \`${bravoName}\` is **`);
    expect(parseObservationBlock(sticky('monitor-bravo'))?.run_name).toBe(bravoName);
    expect(parseObservationBlock(sticky('monitor-alpha'))?.run_name).toMatch(runName('alpha'));
    expect(before).not.toBe('');
  });

  it('/topo cancel <candidate> cancels that candidate only; a new submit runs it under a new label', async () => {
    const { outcome, reply } = await command('/topo cancel bravo');
    expect(outcome).toBe('done');
    expect(reply).toContain(`\`${bravoName}\`: cancelled job`);
    expect(await live('bravo')).toEqual([]);
    expect((await live('alpha')).map((j) => j.id)).toEqual([alphaJob]);
    expect(pull().labels).toContain('topology:running');

    expect((await command('/topo submit bravo')).outcome).toBe('done');
    const rerun = await live('bravo');
    expect(rerun).toHaveLength(1);
    expect(rerun[0]?.name).toMatch(runName('bravo'));
    expect(rerun[0]?.name).not.toBe(bravoName);
  });

  it('/topo stop without a name stops every open run of the pull request', async () => {
    const { outcome, reply } = await command('/topo stop');
    expect(outcome).toBe('done');
    expect(reply.match(/: stopped job \d+/g)).toHaveLength(2);
    expect(await live('alpha')).toEqual([]);
    expect(await live('bravo')).toEqual([]);
    expect((await command('/topo cancel')).reply).toContain('nothing to cancel');
    expect(t.gh.violations()).toEqual([]);
  });
});
