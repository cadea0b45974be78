// One clock (issue 23, case 5): a runner whose clock is 2 hours fast never turns a running job into
// a red check. Run-minutes are counted from Slurm's start time to Prometheus's now; a runner clock
// more than a minute off is reported in the summary and the pass writes no verdict from it (the
// check stays in progress, the label stays, no Outcome). The real submit and monitor actions (their
// bundles), the local Slurm and Prometheus, the local GitHub API; the runner's clock shifted by
// TOPO_TEST_CLOCK_OFFSET_SECONDS.
import { describe, expect, it } from 'vitest';
import { parseRunStateBlock } from '../../../src/lifecycle/state-block.js';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const t = useActionTestbed({
  tag: 'clk',
  pulls: { fast: { title: 'one idea', files: { 'alpha.yaml': workersCandidate('alpha', 10) } } },
});
const pull = () => t.pull('fast');
const checks = () =>
  t.gh.state.checkRuns.filter(
    (c) => c.repo === t.repo && c.headSha === pull().head.sha && c.name === 'topo/monitor',
  );
const pass = (env: Record<string, string> = {}) =>
  t.monitor({ pull: pull(), inputs: { 'tick-seconds': '1' }, env, expectOk: false });

async function untilRunning(): Promise<void> {
  for (let i = 0; i < 60; i++) {
    if ((await t.live('alpha')).some((j) => j.state === 'RUNNING')) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error('the job did not start within 60 s');
}

describe('a runner clock 2 hours fast', () => {
  it('holds the pass: no failure, no verdict, the check in progress, the summary names the skew', async () => {
    const submit = await t.command(pull(), '/topo submit');
    expect(submit.reply).toMatch(/submitted as Slurm job/);
    await untilRunning();
    const first = await pass();
    expect(first.exitCode, first.stderr).toBe(0);
    expect(pull().labels).toEqual(['topology:running']);

    const skewed = await pass({ TOPO_TEST_CLOCK_OFFSET_SECONDS: '7200' });
    expect(pull().labels).toEqual(['topology:running']);
    // a misconfigured runner is reported like an outage: the run fails, saying why
    expect(skewed.summary).toMatch(/the runner's clock \([^)]*\) is 2 h 0 min ahead of Prometheus's/);
    expect(skewed.summary).toContain('no verdict is written from it');
    expect(skewed.exitCode).not.toBe(0);
    const comment = t.sticky(pull(), 'monitor-alpha');
    expect(comment).toMatch(/^<!-- topo:sticky:monitor-alpha -->\n> ⚠️ Runner clock off since /);
    expect(comment).not.toContain('no-telemetry');
    expect(comment).not.toMatch(/run-minutes after the job started/);
    expect(checks().length).toBeGreaterThan(0);
    expect(checks().every((c) => c.conclusion === null)).toBe(true);
    const state = parseRunStateBlock(t.sticky(pull(), 'lifecycle'));
    expect(Object.values(state.outcomes)).toEqual([]);
    expect(await t.live('alpha')).toHaveLength(1);

    // the clocks agree again: the notice goes and the run is judged as usual
    const again = await pass();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(t.sticky(pull(), 'monitor-alpha')).not.toContain('Runner clock off');
    expect(pull().labels).not.toContain('topology:failed');
    expect(t.gh.violations()).toEqual([]);
  });
});
