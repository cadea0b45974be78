// Benchmark (printed, not asserted): the local GitHub API's OpenAPI validation overhead, the
// REST calls each library operation costs, and the monitor's requests per pass and per hour at
// 10 experiments × 3 running candidates + 50 idle PRs, through the monitor's real ports and
// monitor pass (the API budget of an action: 1,000 requests per hour per repository for
// GITHUB_TOKEN).
//
// Run: npm run bench -- github-api
import { upsertCheckRun } from '../src/github/check-runs.js';
import { createOctokit } from '../src/github/client.js';
import { setStateLabel } from '../src/github/labels.js';
import { checkCommandAllowed, pullOrigin } from '../src/github/permissions.js';
import { reactToComment } from '../src/github/reactions.js';
import { upsertStickyComment } from '../src/github/sticky-comment.js';
import { DEFAULT_YIELD_TO, queuedWorkflowRuns } from '../src/github/workflow-runs.js';
import { startGitHubServer } from '../src/github-local/index.js';
import { openApi } from '../src/github-local/openapi.js';
import { watchPass } from '../src/monitor/loop.js';
import { monitorPass } from '../src/monitor/pass.js';
import { budgetWorld, countCalls } from '../test/support/monitor-budget.js';

const t0 = performance.now();
openApi();
console.log(`load + index of the OpenAPI description: ${(performance.now() - t0).toFixed(0)} ms`);

const gh = await startGitHubServer();
const octokit = createOctokit({ token: gh.token, baseUrl: gh.url });
const repo = gh.createRepo('acme/sim', { files: { 'README.md': '#\n' } });
gh.addCollaborator(repo, 'alice', 'write');
const owner = 'acme';
const name = 'sim';
const pull = gh.openPull({
  repo,
  author: 'alice',
  title: 'c',
  head: 'c',
  files: { 'topologies/e/c.yaml': 'x: 1\n' },
});
// Busy pull request: 40 human comments before ours.
for (let i = 0; i < 40; i++) gh.comment(repo, pull.number, 'alice', `comment ${i}`);

async function measure(label: string, fn: () => Promise<unknown>) {
  gh.resetCalls();
  await fn();
  const calls = gh.calls();
  const v = calls.reduce((n, c) => n + c.validationMs, 0);
  const t = calls.reduce((n, c) => n + c.totalMs, 0);
  console.log(
    `${label.padEnd(52)} ${String(calls.length).padStart(3)} calls  server ${t.toFixed(1).padStart(6)} ms  of which validation ${v.toFixed(1).padStart(6)} ms (${((100 * v) / t).toFixed(0)}%)`,
  );
}

const target = { owner, repo: name, issue_number: pull.number, botLogin: gh.botLogin };
await measure('sticky comment: create (first validation compiles)', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'monitor-alpha', body: 'state: running' }),
);
await measure('sticky comment: edit', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'monitor-alpha', body: 'state: stable' }),
);
await measure('sticky comment: unchanged (no write)', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'monitor-alpha', body: 'state: stable' }),
);
await measure('sticky comment: 150,000 characters (3 parts)', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'submit', body: 'x\n'.repeat(75_000) }),
);
const annotations = Array.from({ length: 120 }, (_, i) => ({
  path: 'topologies/e/c.yaml',
  start_line: i + 1,
  end_line: i + 1,
  annotation_level: 'warning' as const,
  message: `m${i}`,
}));
await measure('check run with 120 annotations', () =>
  upsertCheckRun(octokit, {
    owner,
    repo: name,
    name: 'validate',
    head_sha: pull.head.sha,
    conclusion: 'success',
    title: 't',
    summary: 's',
    annotations,
  }),
);
await measure('state label queued → running', async () => {
  await setStateLabel(octokit, { owner, repo: name, issue_number: pull.number }, 'queued');
  await setStateLabel(octokit, { owner, repo: name, issue_number: pull.number }, 'running');
});
await measure('permission + fork check (pulls.get + permission)', async () => {
  const { data } = await octokit.rest.pulls.get({ owner, repo: name, pull_number: pull.number });
  await checkCommandAllowed(octokit, {
    owner,
    repo: name,
    username: 'alice',
    command: 'submit',
    pull: pullOrigin(data),
  });
});
const c = gh.comment(repo, pull.number, 'alice', '/topo submit');
await measure('reaction', () => reactToComment(octokit, { owner, repo: name, comment_id: c.id }, 'received'));

// Steady state: 200 pulls.get, validation compiled.
gh.resetCalls();
const start = performance.now();
for (let i = 0; i < 200; i++) await octokit.rest.pulls.get({ owner, repo: name, pull_number: pull.number });
const wall = performance.now() - start;
const calls = gh.calls();
const v = calls.reduce((n, x) => n + x.validationMs, 0) / calls.length;
const t = calls.reduce((n, x) => n + x.totalMs, 0) / calls.length;
console.log(
  `steady state pulls.get: ${(wall / 200).toFixed(2)} ms per round trip, server ${t.toFixed(2)} ms, validation ${v.toFixed(2)} ms per request`,
);

console.log(`violations: ${gh.violations().length}`);
await gh.close();

// The monitor's API budget, measured on its REAL code path: actions/monitor/ports.ts and the
// monitor pass over the local GitHub API at 10 experiments × 3 running candidates + 50 idle pull
// requests (80 open), Slurm and Prometheus faked (jobs running, synthetic traces whose numbers
// move every pass). An hour of 5-minute passes, then a pass where nothing changed, then /topo status.
const MINUTE = 60;
const NOW = 1_800_000_000;
const w = await budgetWorld({ experiments: 10, running: 3, idle: 50, now: NOW });
async function measuredPass(options: { onlyPull?: number } = {}) {
  w.gh.resetCalls();
  const ports = w.ports(options);
  try {
    const report = await monitorPass(ports, { tickSeconds: 60, lagSeconds: 10 });
    if (report.errors.length) console.log(`  errors: ${report.errors.join('; ')}`);
    const states = new Map<string, number>();
    for (const c of report.candidates) states.set(c.state, (states.get(c.state) ?? 0) + 1);
    const counted = countCalls(w.gh);
    return {
      ...counted,
      changed: report.candidates.filter((c) => c.changed).length,
      states: [...states].map(([k, n]) => `${k} ${n}`).join(', '),
    };
  } finally {
    await ports.close();
  }
}
const line = (label: string, r: Awaited<ReturnType<typeof measuredPass>>) =>
  console.log(
    `  ${label.padEnd(34)} ${String(r.reads).padStart(2)} reads ${String(r.writes).padStart(3)} writes  ${String(r.changed).padStart(2)} PRs changed  (${r.states})`,
  );
console.log(
  '\nmonitor API budget (real ports + monitor pass), 10 experiments × 3 running + 50 idle PRs (80 open):',
);
line('first pass (all written)', await measuredPass());
let reads = 0;
let writes = 0;
let maxReads = 0;
for (let pass = 1; pass <= 12; pass++) {
  w.world.setNow(NOW + pass * 5 * MINUTE);
  const r = await measuredPass();
  reads += r.reads;
  writes += r.writes;
  maxReads = Math.max(maxReads, r.reads);
  line(`pass ${pass} (minute ${pass * 5})`, r);
}
const unchanged = await measuredPass();
line('same moment again (nothing changed)', unchanged);
const status = await measuredPass({ onlyPull: w.candidatePulls[0] as number });
line('/topo status (one PR)', status);
console.log(`  reads per pass: at most ${maxReads} (goal ≤ 5)`);
console.log(
  `  per hour (12 passes, 5-minute schedule; comments at most every 15 minutes unless the state or decision changes, check runs only then): ${reads} reads + ${writes} writes = ${reads + writes} requests (goal ≤ 300; GITHUB_TOKEN allows 1,000)`,
);
console.log(`  writes in a pass where nothing changed: ${unchanged.writes} (goal 0)`);
console.log(`violations: ${w.gh.violations().length}`);
await w.close();

// The watch loop (watch-minutes 4, the reusable workflow's): the pass, then a look every minute for
// 4 minutes over the same world, clock advanced by the loop's own waits. Each look's GitHub
// requests are counted: the queued-command checks (2 a minute) and the writes of its stops only.
const ww = await budgetWorld({ experiments: 10, running: 3, idle: 50, now: NOW });
{
  let now = NOW;
  const ports = ww.ports();
  const atLook: Array<{ reads: number; writes: number }> = [];
  ww.gh.resetCalls();
  try {
    const watched = await watchPass(
      { ...ports, now: () => now },
      { tickSeconds: 60, lagSeconds: 10 },
      { minutes: 4 },
      {
        queued: async () => {
          atLook.push(countCalls(ww.gh));
          return queuedWorkflowRuns(ww.octokit, { owner: 'acme', repo: 'budget' }, DEFAULT_YIELD_TO);
        },
        sleep: async (seconds) => {
          now += seconds;
          ww.world.setNow(now);
        },
      },
    );
    const total = countCalls(ww.gh);
    const pass = atLook[0] ?? total;
    const stopped = watched.looks.flatMap((l) => l.stopped).length;
    const looks = watched.looks.length;
    console.log('\nwatch loop (watch-minutes 4, a look a minute), same world:');
    console.log(`  the pass: ${pass.reads} reads, ${pass.writes} writes`);
    console.log(
      `  ${looks} looks: ${total.reads - pass.reads} reads (the queued-command checks, ${((total.reads - pass.reads) / Math.max(1, looks)).toFixed(1)} per look), ${total.writes - pass.writes} writes (${stopped} candidates stopped; goal: writes only for those), ended: ${watched.ended}`,
    );
    const loopHour = 12 * (total.reads - pass.reads + total.writes - pass.writes);
    console.log(
      `  per hour: the passes' ${reads + writes} above + the loops' ${loopHour} (12 × its looks) = ${reads + writes + loopHour} requests, plus 3 writes per candidate a look stops (GITHUB_TOKEN allows 1,000)`,
    );
    console.log(`violations: ${ww.gh.violations().length}`);
  } finally {
    await ports.close();
    await ww.close();
  }
}
