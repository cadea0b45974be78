// The monitor acts on the decision, end to end on real parts: a baseline and two candidates of the
// twin submitted by monitor passes to the local Slurm, scraped by the local Prometheus, reported
// on pull requests of the local GitHub API. The clearly slower candidate (2 GPUs) is decided `worse`
// against the running baseline and CANCELLED by the monitor (stop_when_decided, the default) before
// the clearly faster one (64 rollouts in flight) is stable; the next passes say "CANCELLED by the
// decision" and record a `decided` Outcome; the baseline is never stopped by a decision.
// Under load (2 cores for several clusters) it asserts order and state, never timings.
import { describe, expect, it } from 'vitest';
import { monitorPass } from '../../../src/monitor/pass.js';
import type { PassReport } from '../../../src/monitor/report.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import { useActionTestbed } from '../../support/action-fixture.js';
import { twinRoles } from '../../support/twin-monitor.js';

// on twin-balanced: 8gpu_12rollouts ≈ 5.8 s/rollout, 2gpu ≈ 9.9 (worse), 8gpu_64rollouts ≈ 2.4 (better)
const PRESETS = { baseline: '8gpu_12rollouts', worse: '2gpu', better: '8gpu_64rollouts' } as const;
type Role = keyof typeof PRESETS;
const ROLES = Object.keys(PRESETS) as Role[];

const t = useActionTestbed({
  tag: 'dec',
  pulls: Object.fromEntries(ROLES.map((role) => [role, { files: { [`${role}.yaml`]: `name: ${role}\n` } }])),
});
const { ports, request, outcomes } = twinRoles(t, PRESETS);

const commentOf = (role: Role) =>
  t.gh.state.commentsOn(t.repo, t.pull(role).number).find((c) => c.user.login === t.gh.botLogin)?.body ?? '';

describe('the monitor stops a candidate on its decision (local cluster, twin)', () => {
  it('decides the slower candidate (worse, or not-better: it cannot win) and cancels it before the faster one is stable', async () => {
    const history: string[] = [];
    const at = (r: PassReport, role: Role) => r.candidates.find((c) => c.candidate === role);
    let cancelledAtPass: number | undefined;
    let betterStableAtPass: number | undefined;
    let betterAtCancel: string | undefined;
    let pass = 0;
    const deadline = Date.now() + 420_000;
    while (Date.now() < deadline) {
      const report = await monitorPass(ports(), { tickSeconds: 1, lagSeconds: 2 });
      pass++;
      expect(report.errors).toEqual([]);
      const line = ROLES.map((role) => {
        const c = at(report, role);
        return `${role}:${c?.state}/${c?.view.observation.decision?.state ?? '-'}${c?.cancelled ? '!' : ''}`;
      }).join(' ');
      if (history.at(-1) !== line) history.push(line);
      expect(at(report, 'baseline')?.cancelled, history.join('\n')).toBeUndefined();
      if (betterStableAtPass === undefined && at(report, 'better')?.state === 'stable')
        betterStableAtPass = pass;
      if (at(report, 'worse')?.cancelled) {
        cancelledAtPass = pass;
        betterAtCancel = at(report, 'better')?.state;
      }
      const worse = at(report, 'worse');
      const better = at(report, 'better')?.view.observation.decision?.state;
      if (
        cancelledAtPass !== undefined &&
        worse?.state === 'stopped' &&
        commentOf('worse').includes('final-job:') &&
        better !== undefined &&
        better !== 'measuring' &&
        // faster at equal run age is provisional: it runs on until the full-run guard settles it
        better !== 'better-at-equal-age'
      )
        break;
      // short pauses: each pass looks a few run-minutes later, so the order of decision and stable shows
      await new Promise((r) => setTimeout(r, 1000));
    }
    console.log(`passes:\n${history.join('\n')}`);
    expect(cancelledAtPass, history.join('\n')).toBeDefined();
    // the better one was not stable when the worse one was cancelled (it may never be: decided, it stops too)
    expect(betterAtCancel).not.toBe('stable');
    if (betterStableAtPass !== undefined) expect(cancelledAtPass as number).toBeLessThan(betterStableAtPass);

    // the worse candidate: decided, stopped by the decision, its GPU-minutes saved
    const body = commentOf('worse');
    const observation = parseObservationBlock(body);
    // worse than the baseline, or (sooner) not-better: it cannot be 2% faster than the baseline or
    // than the faster candidate leading the experiment (the futility stop and the pruner)
    const decision = observation?.decision;
    expect(['worse', 'not-better']).toContain(decision?.state);
    expect([decision?.reference.role, decision?.reference.name]).toEqual(
      decision?.reference.role === 'baseline' ? ['baseline', 'baseline'] : ['leading candidate', 'better'],
    );
    expect(decision?.relative_change?.low).toBeGreaterThan(decision?.state === 'worse' ? 0 : -0.02);
    expect(observation?.decision?.gpu_minutes_saved).toBeGreaterThan(0);
    expect((observation?.decision?.gpu_minutes_used as number) % 8).toBe(0);
    expect(body).toMatch(
      /^### (🔴 `worse`: worse than the baseline by \d|🟠 `worse`: not 2% \(min_improvement\) faster than the (baseline|leading candidate `better` \(#\d+\)): it cannot win)/m,
    );
    expect(body).toMatch(
      /Slurm job \d+: CANCELLED by the decision \(\d+ GPU-minutes (saved against|more than) the seed's 45-minute read \(\d+ against the job's wall time\)\)/,
    );
    expect(body).toContain('⏹️ stopped');
    const worseRequest = request('worse');
    const outcome = outcomes.get(worseRequest.id);
    expect(outcome?.kind).toBe('decided');
    expect(outcome?.evidence[0]).toMatch(
      /^(worse|not-better) against (the baseline|the leading candidate better)/,
    );
    const job = (await t.jobs('worse')).find((j) => j.name === worseRequest.runName);
    expect(job?.state).toBe('CANCELLED');

    // the check runs carry the decision: the regression fails, the baseline is the reference
    const check = (role: Role) =>
      t.gh.state.checkRuns
        .filter((c) => c.repo === t.repo && c.headSha === t.pull(role).head.sha && c.name === 'topo/monitor')
        .at(-1);
    expect(check('worse')?.conclusion).toBe('failure');
    expect(check('baseline')?.conclusion).toBe('success');
    expect(commentOf('baseline')).toMatch(/^### 📏 `baseline`: the reference/m);
    // the faster one is decided better against the running baseline: the check that lets it merge
    expect(parseObservationBlock(commentOf('better'))?.decision?.state).toBe('better');
    expect(check('better')?.conclusion).toBe('success');
    expect(commentOf('better')).toContain('**Recommended: merge — best so far.**');
    expect(t.gh.violations()).toEqual([]);
  });
});
