// What `topo demo --autopilot` prints between two passes (src/demo/autopilot-view.ts), and the quick
// run's scripted writer (src/demo/autopilot.ts quickScript): pure, over HubViews built in memory.
import { describe, expect, it } from 'vitest';
import { apiLine, quickScript } from '../../../src/demo/autopilot.js';
import {
  decisionOf,
  EMPTY_HUB,
  type HubView,
  narrate,
  type PullView,
} from '../../../src/demo/autopilot-view.js';

const DASHBOARD = (best: string, spent: string, concluded = '') =>
  [
    '**Round:** 1.',
    '',
    `**GPU-hours:** ${spent} spent, 0.0 committed to live runs, 140.0 left of 150.0.`,
    '',
    `**Best so far:** \`${best}\`, 10.80 s/rollout.`,
    '',
    '| round | candidate | pull request | decision | s/rollout | GPU-hours |',
    '|---|---|---|---|---|---|',
    '| baseline | `baseline` | #1 | reference | 10.80 | 6.5 |',
    '| 1 | `model` | #3 | better | 8.18 | 6.0 |',
    ...(concluded ? ['', `**Concluded:** ${concluded}`] : []),
  ].join('\n');

const pull = (over: Partial<PullView>): PullView => ({
  number: 3,
  candidate: 'model',
  round: 1,
  state: 'open',
  hypothesis: 'more drivers',
  decision: null,
  closing: null,
  ...over,
});

const hub = (pulls: PullView[], body: string, more: Partial<HubView> = {}): HubView => ({
  pulls,
  dashboard: { number: 2, open: true, body },
  replies: [],
  reported: false,
  ...more,
});

describe('narrate', () => {
  it('a new round: its header, the best it starts from, each proposal and the GPU-hours against the budget', () => {
    const next = hub([pull({})], DASHBOARD('baseline', '10.0'));
    expect(narrate(EMPTY_HUB, next)).toEqual([
      'round 1',
      '  from the current best: baseline, 10.80 s/rollout.',
      '  #3 model: more drivers',
      '  GPU-hours: 10.0 of 150.0 spent (0.0 committed to live runs)',
    ]);
  });

  it('a decision once, with the figure of its dashboard row; a merge; nothing when nothing changed', () => {
    const before = hub([pull({})], DASHBOARD('baseline', '10.0'));
    const title =
      '2 candidates: model: Better than the baseline (the current best) by 24.3%; baseline: Reference run';
    const decided = hub([pull({ decision: title })], DASHBOARD('baseline', '16.0'));
    expect(narrate(before, decided)).toEqual([
      '  #3 model: Better than the baseline (the current best) by 24.3% at 8.18 s/rollout',
    ]);
    expect(narrate(decided, decided)).toEqual([]);
    const merged = hub([pull({ decision: title, state: 'merged' })], DASHBOARD('model', '16.0'));
    expect(narrate(decided, merged)).toEqual(['  #3 model: merged into the default branch and recorded']);
  });

  it('the conclusion with its winner and the GPU-hours, then the final report', () => {
    const before = hub([pull({ state: 'merged' })], DASHBOARD('model', '30.0'));
    const done = hub(
      [pull({ state: 'merged' })],
      DASHBOARD('model', '30.0', 'max\\_rounds 1 reached; winner: `model`. The final report is below.'),
      { reported: true },
    );
    expect(narrate(before, done)).toEqual([
      'concluded: max_rounds 1 reached; winner: model.',
      '  GPU-hours: 30.0 of 150.0 spent (0.0 committed to live runs)',
      '  the final report is posted on the dashboard, which closes',
    ]);
  });
});

describe('narrate after the conclusion', () => {
  it('prints the GPU-hours again when a later pass charges the runs stopped at the conclusion', () => {
    const concluded = 'max\\_rounds 1 reached; winner: `model`.';
    const done = hub([pull({ state: 'merged' })], DASHBOARD('model', '59.9', concluded));
    const charged = hub([pull({ state: 'merged' })], DASHBOARD('model', '60.0', concluded));
    expect(narrate(done, charged)).toEqual(['  GPU-hours: 60.0 of 150.0 spent (0.0 committed to live runs)']);
    expect(narrate(charged, charged)).toEqual([]);
  });
});

describe('decisionOf', () => {
  it('reads the candidate’s own decision from a check run titled for it and the reference job', () => {
    expect(decisionOf('2 candidates: a: Worse than b; b: Reference run', 'a')).toBe('Worse than b');
    expect(decisionOf('Better than the baseline by 5%', 'a')).toBe('Better than the baseline by 5%');
  });
});

/** The quick run's script over a writer that notes what it did. */
function scriptedWriter() {
  const did: string[] = [];
  const step = quickScript(
    { comment: (b) => did.push(b), lowerBudget: (g) => did.push(`budget ${g}`) },
    () => {},
  );
  return { did, step };
}

describe('quickScript', () => {
  it('pauses once round 1 opened, resumes three passes later, and lowers the budget to what is spent once round 2 opened', () => {
    const { did, step } = scriptedWriter();
    const r1 = hub([pull({})], DASHBOARD('baseline', '10.0'));
    const r2 = hub(
      [pull({}), pull({ number: 5, candidate: 'model-2', round: 2 })],
      DASHBOARD('model', '24.4'),
    );
    step(1, EMPTY_HUB, r1);
    step(2, r1, r1);
    step(4, r1, r1);
    step(5, r1, r2);
    step(6, r2, r2);
    expect(did).toEqual(['/topo pause', '/topo resume', 'budget 24']);
  });
});

describe('a round that opens with reruns only (issue 42: the quick demo went from round 1 to round 3)', () => {
  // round 2 reruns `model` on its round-1 pull request beside the round's reference: no new pull request
  const rerunRound = (spent: string) =>
    DASHBOARD('baseline', spent).replace(
      '| 1 | `model` | #3 | better | 8.18 | 6.0 |',
      '| 1 | `model-a` | #4 | not-better | 10.90 | 3.0 |\n| 2 | `model` (attempt 2) | #3 | waiting | – | 0.0 |',
    );

  it('narrates its header and the rerun once', () => {
    const r1 = hub([pull({})], DASHBOARD('baseline', '10.0'));
    const r2 = hub([pull({})], rerunRound('16.0'));
    const lines = narrate(r1, r2);
    expect(lines).toContain('round 2');
    expect(lines).toContain("  `model` again (attempt 2): held, rerun beside the round's reference");
    expect(narrate(r2, r2)).toEqual([]);
  });

  it('is round 2 to the quick run’s writer: the budget is lowered there', () => {
    const { did, step } = scriptedWriter();
    const r1 = hub([pull({})], DASHBOARD('baseline', '10.0'));
    const r2 = hub([pull({})], rerunRound('16.5'));
    step(1, EMPTY_HUB, r1);
    step(4, r1, r1);
    step(5, r1, r2);
    expect(did).toEqual(['/topo pause', '/topo resume', 'budget 16']);
  });
});

describe('apiLine', () => {
  it('says the passes’ requests and an hour of them at one pass every 5 minutes', () => {
    expect(apiLine({ reads: 90, writes: 10 }, 50)).toBe(
      'GitHub API: 100 requests in 50 passes (90 reads, 10 writes), 2.0 a pass: about 24 an hour at one pass every 5 minutes',
    );
  });
});
