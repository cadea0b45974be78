// Issue 42: a round whose only action is a rerun. The monitor's own passes (the demo's real parts:
// the local GitHub API from dist/github-local.js, the monitor action's ports, the local Slurm with
// the twin and Prometheus) run the quick demo's experiment with one candidate a round: round 1's
// candidate is held (faster at equal run age, a guard holding the claim at the 20-minute horizon),
// so round 2 opens with its rerun alone, on its round-1 pull request, which already carries round
// 1's reference Request. Attempt 2 must be submitted, run beside a new reference job of the best
// (not decided against the recorded run), decided, and the dashboard must show `name` (attempt 2)
// at the figure its decision gives (one judgement: the comment, the check and the dashboard).
// Needs `npm run build` (dist/github-local.js), as the demo's tests do.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { demoPolicy } from '../../../src/demo/autopilot.js';
import { realAutopilotParts } from '../../../src/demo/autopilot-parts.js';
import { type DashboardRow, dashboardRows } from '../../../src/demo/autopilot-view.js';
import type { ClusterEnv } from '../../../src/demo/run.js';
import { dateStamp, SAMPLE_COMMAND } from '../../../src/demo/sample.js';
import { parseObservationBlock } from '../../../src/report/observation-block.js';
import type { Experiment } from '../../../src/types/generated/experiment.js';
import type { CandidateObservation } from '../../../src/types/generated/metrics.js';
import { repoRoot } from '../../support/cluster.js';

/**
 * The quick demo's experiment with one candidate a round, two rounds and decisions within 20
 * run-minutes: at that horizon the full-run guard's slope of round 1's candidate is still too
 * uncertain to settle it, so its gain of about 25% at equal run age is held
 * (faster-drift-not-ruled-out) and round 2 is its rerun alone.
 */
function rerunPolicy(): Partial<Experiment> {
  const quick = demoPolicy(true);
  const autopilot = { ...quick.autopilot, parallel: 1, max_rounds: 2 };
  return { ...quick, max_decision_minutes: 20, autopilot } as Partial<Experiment>;
}

/** Each comment of a pull request's page (src/demo/autopilot-parts.ts pullPages) with its observation. */
function comments(markdown: string): Array<{ body: string; observation?: CandidateObservation }> {
  return markdown.split(/\n\n---\n\n\*\*@[^*]+\*\*\n\n/).map((body) => {
    const observation = parseObservationBlock(body);
    return observation ? { body, observation } : { body };
  });
}

/** What the passes showed: the attempt-2 row as the dashboard had it, the runs each candidate's comment named. */
interface Seen {
  row: DashboardRow | null;
  /** Run names of the rerun candidate's comment, in the order they appeared (attempt 1, attempt 2). */
  runs: string[];
  /** Run names of the reference jobs named beside it. */
  references: string[];
}

/** The run names the candidate's pull request names so far: its own jobs', and the reference jobs' beside it. */
function note(
  seen: Seen,
  candidate: string,
  pages: ReturnType<ReturnType<typeof realAutopilotParts>['pages']>,
) {
  const page = pages.find((p) => p.title.endsWith(`/${candidate}`));
  for (const c of page ? comments(page.markdown) : []) {
    const run = c.observation?.run_name;
    if (!run) continue;
    const list = run.includes(`-${candidate}-`) ? seen.runs : seen.references;
    if (!list.includes(run)) list.push(run);
  }
}

const DECIDED = (row: DashboardRow | null) =>
  !!row && !['waiting', 'running', 'withdrawn'].includes(row.decision) && row.seconds !== null;

type Parts = ReturnType<typeof realAutopilotParts>;

/** Monitor passes every 2 s until the dashboard's attempt-2 row shows a decision (or the loop closes). */
async function watchRerun(parts: Parts, env: ClusterEnv, id: string): Promise<Seen & { log: string[] }> {
  const seen: Seen = { row: null, runs: [], references: [] };
  const log: string[] = [];
  let candidate: string | null = null;
  for (let pass = 1; pass <= 150 && !DECIDED(seen.row); pass++) {
    const errors = await parts.pass(env);
    expect(errors, `pass ${pass}`).toEqual([]);
    const view = parts.view(id);
    const rows = view.dashboard ? dashboardRows(view.dashboard.body) : [];
    seen.row = rows.find((r) => r.round === '2' && r.attempt === 2) ?? seen.row;
    log.push(
      `pass ${pass}: ${rows.map((r) => `${r.round} ${r.name}#${r.attempt} ${r.decision}`).join(', ')}`,
    );
    candidate ??= rows.find((r) => r.round === '1')?.name ?? null;
    if (candidate) note(seen, candidate, parts.pages(id));
    if (view.reported) break;
    await sleep(2000);
  }
  return { ...seen, log };
}

describe('a round whose only action is a rerun (issue 42)', () => {
  it('submits attempt 2 on its pull request, runs it beside a new reference job, decides it, and the dashboard shows it at its decision’s figure', async () => {
    const parts = realAutopilotParts(repoRoot, process.env, mkdtempSync(join(tmpdir(), 'topo-rerun-')));
    const env = await parts.cluster.status();
    if (!env) throw new Error('the local cluster is not up: bash scripts/local-cluster up');
    const policy = rerunPolicy();
    const { experiment, files } = await parts.prepare(SAMPLE_COMMAND, env, dateStamp(new Date()), policy);
    const id = experiment.experiment_id;
    await parts.github(files);
    try {
      const seen = await watchRerun(parts, env, id);
      const why = seen.log.join('\n');
      // round 2 is the rerun alone: attempt 2 of round 1's candidate, its own job on the same pull request
      expect(seen.row, why).not.toBeNull();
      expect(seen.runs, why).toHaveLength(2);
      const page = parts.pages(id).find((p) => p.title.endsWith(`/${seen.row?.name}`));
      const mine = comments(page?.markdown ?? '').find((c) => c.observation?.run_name === seen.runs[1]);
      const decision = mine?.observation?.decision;
      expect(decision?.state, why).toBeDefined();
      expect(decision?.state).not.toBe('measuring');
      expect(decision?.reference.name).toBe('baseline');
      // decided against a job of the best that ran beside it in round 2: not round 1's, not the record
      const beside = /Reference: [^\n]*, run `([^`]+)` beside this candidate/.exec(mine?.body ?? '')?.[1];
      expect(beside, `${mine?.body}\n${why}`).toBeDefined();
      expect(seen.references.indexOf(beside as string), why).toBeGreaterThan(0);
      // one judgement: the dashboard's attempt-2 row is at its decision's figure
      expect(DECIDED(seen.row), why).toBe(true);
      expect(seen.row?.seconds).toBeCloseTo(decision?.figure?.value ?? Number.NaN, 2);
      console.log(
        `attempt 2 of ${seen.row?.name}: ${decision?.state} at ${decision?.figure?.value} s/rollout ` +
          `(${decision?.relative_change?.value}), dashboard ${seen.row?.decision} at ${seen.row?.seconds}; ` +
          `beside ${beside}; ${seen.log.length} passes`,
      );
    } finally {
      await parts.cancelAll(id, env);
      await parts.close();
    }
  }, 900_000);
});
