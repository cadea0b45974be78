// Benchmark (printed, not asserted): the local GitHub API's OpenAPI validation overhead, the
// REST calls each library operation costs, and the monitor's requests per pass and per hour at
// 10 experiments × 3 running candidates + 50 idle PRs (the API budget of an action: 1,000
// requests per hour per repository for GITHUB_TOKEN).
//
// Run: npm run bench -- github-api
import { createHash } from 'node:crypto';
import { upsertCheckRun } from '../src/github/check-runs.js';
import { createOctokit } from '../src/github/client.js';
import { setStateLabel } from '../src/github/labels.js';
import { checkCommandAllowed, pullOrigin } from '../src/github/permissions.js';
import { readBlobs, readPullSnapshots, snapshotSticky } from '../src/github/pull-snapshots.js';
import { reactToComment } from '../src/github/reactions.js';
import { upsertStickyComment } from '../src/github/sticky-comment.js';
import { type CommentStamp, renderCommentStamp, shouldWriteComment } from '../src/report/comment-throttle.js';
import { startGitHubServer } from '../test/support/github-server/index.js';
import { openApi } from '../test/support/github-server/openapi.js';

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
  upsertStickyComment(octokit, { ...target, purpose: 'monitor', body: 'state: running' }),
);
await measure('sticky comment: edit', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'monitor', body: 'state: stable' }),
);
await measure('sticky comment: unchanged (no write)', () =>
  upsertStickyComment(octokit, { ...target, purpose: 'monitor', body: 'state: stable' }),
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

// The monitor's API budget at 10 experiments × 3 running candidates + 50 idle pull requests, over
// an hour of 5-minute passes, as the monitor reads and writes with pull snapshots: one GraphQL
// query per page of open PRs, one for the candidate files, comments rewritten only through
// shouldWriteComment (comment_interval_minutes 15), the check run only when the standing changes.
// Every pass the numbers of every running candidate move; a few candidates reach a decision.
const budget = gh.createRepo('acme/budget', { files: { 'README.md': '#\n' } });
gh.addCollaborator(budget, 'alice', 'write');
const B = { owner: 'acme', repo: 'budget', botLogin: gh.botLogin };
const candidates: Array<{ pr: number; sha: string; path: string; outcome: string; stamp?: CommentStamp }> =
  [];
for (let e = 0; e < 10; e++)
  for (let c = 0; c < 3; c++) {
    const path = `topologies/exp-${e}/c${c}.yaml`;
    const p = gh.openPull({
      repo: budget,
      author: 'alice',
      title: path,
      head: `e${e}c${c}`,
      files: { [path]: `name: c${c}\n` },
    });
    p.labels.push('topology:running');
    for (let i = 0; i < 5; i++) gh.comment(budget, p.number, 'alice', `review ${i}`);
    candidates.push({ pr: p.number, sha: p.head.sha, path, outcome: 'measuring' });
  }
for (let i = 0; i < 50; i++) {
  const p = gh.openPull({
    repo: budget,
    author: 'alice',
    title: `idle ${i}`,
    head: `idle-${i}`,
    files: { [`docs/${i}.md`]: 'x\n' },
  });
  for (let j = 0; j < 3; j++) gh.comment(budget, p.number, 'alice', `talk ${j}`);
}

const MINUTE = 60_000;
const isRead = (call: { method: string; path: string }) => call.method === 'GET' || call.path === '/graphql';
async function monitorPass(pass: number, nowMs: number): Promise<{ reads: number; writes: number }> {
  gh.resetCalls();
  const { pulls } = await readPullSnapshots(octokit, B);
  const live = pulls.filter((p) => p.labels.includes('topology:running'));
  await readBlobs(
    octokit,
    B,
    live.flatMap((p) => p.files.map((f) => ({ sha: p.headSha, path: f.path }))),
  );
  for (const [i, c] of candidates.entries()) {
    const snap = pulls.find((p) => p.number === c.pr);
    if (!snap) continue;
    // candidate i decides at pass 4 + i (those that reach it within the hour)
    const outcome = pass >= 4 + i ? (i % 2 ? 'worse' : 'better') : 'measuring';
    const state = 'stabilising';
    const body = `numbers of pass ${pass} for ${c.path}`;
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
    const next = { state, outcome, hash };
    if (!shouldWriteComment(c.stamp, next, nowMs, 15)) continue;
    const stamp = { ...next, writtenAtMs: nowMs };
    const parts = snapshotSticky(snap, { purpose: 'monitor', botLogin: gh.botLogin });
    if (!c.stamp || c.stamp.outcome !== outcome)
      await upsertCheckRun(octokit, {
        ...B,
        name: 'topo/monitor',
        head_sha: c.sha,
        title: outcome,
        summary: body,
        ...(outcome === 'measuring' ? {} : { conclusion: outcome === 'better' ? 'success' : 'failure' }),
      });
    await upsertStickyComment(
      octokit,
      { ...B, issue_number: c.pr, purpose: 'monitor', body: `${body}\n${renderCommentStamp(stamp)}` },
      parts,
    );
    c.stamp = stamp;
  }
  const calls = gh.calls();
  return { reads: calls.filter(isRead).length, writes: calls.filter((x) => !isRead(x)).length };
}

const first = await monitorPass(0, 0);
console.log(`\nmonitor API budget, 10 experiments × 3 running candidates + 50 idle PRs (80 open):`);
console.log(
  `  first pass (every comment and check run written): ${first.reads} reads, ${first.writes} writes`,
);
let reads = 0;
let writes = 0;
let maxReads = 0;
for (let pass = 1; pass <= 12; pass++) {
  const r = await monitorPass(pass, pass * 5 * MINUTE);
  reads += r.reads;
  writes += r.writes;
  maxReads = Math.max(maxReads, r.reads);
  console.log(
    `  pass ${String(pass).padStart(2)} (minute ${String(pass * 5).padStart(2)}): ${r.reads} reads, ${String(r.writes).padStart(2)} writes`,
  );
}
console.log(
  `  per hour (12 passes): ${reads} reads + ${writes} writes = ${reads + writes} requests (goal ≤ 300; GITHUB_TOKEN allows 1,000)`,
);
console.log(`  reads per pass: at most ${maxReads} (goal ≤ 5)`);
// Unchanged pull requests: the same content again at once → no write at all.
for (const c of candidates) if (c.stamp) c.stamp = { ...c.stamp, hash: 'f'.repeat(16) };
gh.resetCalls();
const { pulls: again } = await readPullSnapshots(octokit, B);
let unchangedWrites = 0;
for (const c of candidates) {
  const stamp = c.stamp as CommentStamp;
  if (
    shouldWriteComment(
      stamp,
      { state: stamp.state, outcome: stamp.outcome, hash: stamp.hash },
      13 * 5 * MINUTE,
      15,
    )
  )
    unchangedWrites++;
}
console.log(
  `  a pass where nothing changed: ${gh.calls().length} reads (${again.length} PRs), ${unchangedWrites} writes`,
);
console.log(`violations: ${gh.violations().length}`);
await gh.close();
