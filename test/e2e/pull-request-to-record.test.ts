// End to end, as a team uses it: a pull request adds a candidate → the validate action posts
// annotations and a passing check → a collaborator comments `/topo submit` → the twin runs on the
// local Slurm → Prometheus scrapes it → monitor passes until the comment shows `stable` with
// metrics and a chart → the pull request is merged → the record commit is on the default branch.
// Beside it: a fork pull request and a non-collaborator are refused, and malicious candidates are
// rejected at validate and never reach sbatch.
//
// Every action runs as the committed bundle in a child process with a runner's environment
// (test/support/run-action.ts), against the local GitHub API (every request validated against
// GitHub's OpenAPI description) and the real local cluster (`bash scripts/local-cluster up`).
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Pull, Repo } from '../../src/github-local/index.js';
import { requireCluster } from '../support/cluster.js';
import { type EventFile, issueCommentEvent, pullRequestEvent, scheduleEvent } from '../support/events.js';
import { runActionOn, useLocalGitHub } from '../support/local-github.js';
import { type ActionRun, repoRoot } from '../support/run-action.js';

const REPOSITORY = 'acme/alpasim-experiments';
const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
// Unique per run so leftovers of an earlier run (same Slurm, same Prometheus) cannot match.
const tag = Math.random().toString(36).slice(2, 8).replace(/[0-9]/g, 'x');
const EXPERIMENT = `topology-opt-e2e${tag}-vavam-local-${today}`;
const FOLDER = `topologies/${EXPERIMENT}`;
const CANDIDATE = 'more-workers';

// The tokens carry exactly what each workflow's `permissions:` grants (see .github/workflows).
const PERMISSIONS = {
  validate: { checks: 'write', contents: 'read', 'pull-requests': 'read' },
  submit: { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  monitor: { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  record: { contents: 'write', 'pull-requests': 'write' },
} as const;

const { gh } = useLocalGitHub({ strict: true });
let repo: Repo;
let cluster: ReturnType<typeof requireCluster>;
/** The default-branch checkout the self-hosted workflows run in (`ref: default_branch`). */
let workspace: string;
/** Every sbatch call of the actions, one argv per line (a PATH shim in front of the real sbatch). */
let sbatchLog: string;
let shimDir: string;
const tokens: Record<string, string> = {};

function experimentYaml(): string {
  return [
    `experiment_id: ${EXPERIMENT}`,
    'objective: minimize stabilized full-run seconds_per_rollout',
    'cluster: local',
    'base_topology: 8gpu_64rollouts',
    'max_parallel: 3',
    'fixed_inputs:',
    '  deploy: twin-balanced',
    '  driver: vavam',
    '  scenes: public_2601',
    // Long enough (about 2 real minutes at time scale 60) for the detector's consecutive windows.
    '  rollouts_per_scene: 3',
    '',
  ].join('\n');
}

/**
 * The local cluster's clusters.yaml, with the memory model of the twin profile the experiment
 * deploys (twin-balanced), as a team would calibrate it from measured runs.
 */
function clustersYaml(): string {
  const doc = parse(readFileSync(cluster.clustersFile, 'utf8')) as {
    clusters: Record<string, Record<string, unknown>>;
  };
  const local = doc.clusters.local as Record<string, unknown>;
  local.memory_model = {
    per_replica_gib: { renderer: 8, driver: 4, physics: 1.5, controller: 0, trafficsim: 6 },
    per_cached_scene_gib: { renderer: 2, physics: 0.5 },
    per_gpu_overhead_gib: 0.5,
  };
  return stringify({ clusters: { local } });
}

/** A candidate; each pull request needs a distinct topology (duplicates are refused). */
function candidateYaml(name = CANDIDATE, workers = 16): string {
  return [
    `name: ${name}`,
    'parent: null',
    'hypothesis: More runtime workers spread the rollouts over more event loops.',
    'expected_effect: Lower full-run seconds_per_rollout.',
    'topology:',
    '  runtime:',
    `    nr_workers: ${workers}`,
    '',
  ].join('\n');
}

/** Writes the default branch's files to a fresh folder: what actions/checkout would produce. */
function checkoutDefaultBranch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-e2e-checkout-'));
  for (const [path, text] of gh.files(repo)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function env(): Record<string, string> {
  return {
    PATH: `${shimDir}:${process.env.PATH}`,
    SLURM_CONF: cluster.slurmConf,
    TOPO_CLUSTER_STATE: cluster.stateDir,
  };
}

/** Inputs the workflows would pass for the local cluster (time-compressed runs). */
function inputsFor(name: keyof typeof PERMISSIONS): Record<string, string> {
  if (name === 'record') return { 'time-scale': String(cluster.timeScale) };
  // One evaluation per real second: at time scale 60 that is the monitor's minute.
  if (name === 'monitor') return { 'tick-seconds': '1' };
  return {};
}

/** REST calls per action run (printed with TOPO_REPORT_CALLS=1: the API budget of each action). */
const callLog: { action: string; event: string; calls: number; validationMs: number }[] = [];

async function act(name: keyof typeof PERMISSIONS, event: EventFile, actor = 'alice'): Promise<ActionRun> {
  gh.resetCalls();
  const run = await runActionOn(gh, name, {
    event,
    inputs: inputsFor(name),
    repository: REPOSITORY,
    token: tokens[name] as string,
    workspace: name === 'validate' ? checkoutDefaultBranch() : workspace,
    env: env(),
    actor,
    timeoutMs: 120_000,
  });
  const calls = gh.calls();
  const body = (event.payload.comment as { body?: string } | undefined)?.body;
  const verdict =
    name === 'monitor' ? / — (\w+)[\s\S]*?Verdict: `([\w-]+)`/.exec(stickyMonitorBody() ?? '') : null;
  callLog.push({
    action: name,
    event: `${event.eventName}${body ? ` "${body.split('\n')[0]}"` : ''}${verdict ? ` → ${verdict[1]}, ${verdict[2]}` : ''}`,
    calls: calls.length,
    validationMs: calls.reduce((n, c) => n + c.validationMs, 0),
  });
  return run;
}

function sbatchCalls(): string[][] {
  if (!existsSync(sbatchLog)) return [];
  return readFileSync(sbatchLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as string[]);
}

function slurmJobNames(): string[] {
  const out = execFileSync('squeue', ['-h', '-o', '%j'], {
    encoding: 'utf8',
    env: { ...process.env, ...env() },
  });
  return out.split('\n').filter((n) => n.startsWith(`topo-${EXPERIMENT}-`));
}

/** The monitor's comment on any pull request (for the call log). */
function stickyMonitorBody(): string | undefined {
  return gh.state.comments
    .filter(
      (c) => c.user.login === gh.botLogin && c.body.startsWith(`<!-- topo:sticky:monitor-${CANDIDATE} -->`),
    )
    .at(-1)?.body;
}

function stickyComment(pull: Pull, purpose: string): string | undefined {
  return gh.state
    .commentsOn(repo, pull.number)
    .find((c) => c.user.login === gh.botLogin && c.body.startsWith(`<!-- topo:sticky:${purpose} -->`))?.body;
}

beforeAll(async () => {
  cluster = requireCluster();
  for (const [name, permissions] of Object.entries(PERMISSIONS)) {
    tokens[name] = gh.createToken(gh.botLogin, { permissions: { ...permissions } });
  }
  const files: Record<string, string> = {
    'topologies/clusters.yaml': clustersYaml(),
    [`${FOLDER}/experiment.yaml`]: experimentYaml(),
  };
  for (const preset of readdirSync(join(repoRoot, 'topologies/presets'))) {
    files[`topologies/presets/${preset}`] = readFileSync(
      join(repoRoot, 'topologies/presets', preset),
      'utf8',
    );
  }
  repo = gh.createRepo(REPOSITORY, { files });
  gh.addCollaborator(repo, 'alice', 'write');
  gh.state.user('stranger');
  workspace = checkoutDefaultBranch();

  shimDir = mkdtempSync(join(tmpdir(), 'topo-e2e-shim-'));
  sbatchLog = join(shimDir, 'sbatch.log');
  const realSbatch = execFileSync('bash', ['-c', 'command -v sbatch'], { encoding: 'utf8' }).trim();
  const shim = join(shimDir, 'sbatch');
  writeFileSync(
    shim,
    [
      '#!/usr/bin/env node',
      "const { appendFileSync } = require('node:fs');",
      "const { spawnSync } = require('node:child_process');",
      `appendFileSync(${JSON.stringify(sbatchLog)}, JSON.stringify(process.argv.slice(2)) + '\\n');`,
      `const r = spawnSync(${JSON.stringify(realSbatch)}, process.argv.slice(2), { stdio: 'inherit' });`,
      'process.exit(r.status ?? 1);',
      '',
    ].join('\n'),
  );
  chmodSync(shim, 0o755);
});

afterAll(async () => {
  if (process.env.TOPO_REPORT_CALLS) {
    // The conversation as users would read it, for eyeballing the comments.
    const dump = gh.state.comments.map(
      (c) => `## #${c.issueNumber} @${c.user.login} (${c.id})\n\n${c.body}\n`,
    );
    writeFileSync(join(tmpdir(), 'topo-e2e-comments.md'), dump.join('\n'));
    for (const c of callLog) {
      console.log(
        `${c.action.padEnd(9)} ${c.event.padEnd(40)} ${String(c.calls).padStart(3)} calls, validation ${c.validationMs.toFixed(0)} ms`,
      );
    }
  }
  // Leave the shared cluster as we found it.
  if (cluster) {
    const names = (() => {
      try {
        return slurmJobNames();
      } catch {
        return [];
      }
    })();
    for (const name of names)
      execFileSync('scancel', ['--name', name], { env: { ...process.env, ...env() } });
  }
  if (process.env.TOPO_REPORT_CALLS)
    writeFileSync(join(tmpdir(), 'topo-e2e-violations.txt'), gh.violations().join('\n'));
});

describe('from pull request to record', () => {
  let pull: Pull;

  it('validate passes the new candidate (the job’s check is green) and summarises it', async () => {
    pull = gh.openPull({
      repo,
      author: 'alice',
      title: `Try ${CANDIDATE}`,
      head: CANDIDATE,
      files: { [`${FOLDER}/${CANDIDATE}.yaml`]: candidateYaml() },
    });
    const run = await act('validate', pullRequestEvent(gh, pull, 'opened'));
    // The exit code is the job's check conclusion on GitHub.
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs.errors).toBe('0');
    // Annotations (warnings at most) point at the candidate file and line.
    for (const a of run.annotations) {
      expect(a.command).not.toBe('error');
      expect(a.properties.file).toMatch(new RegExp(`^${FOLDER}/`));
      expect(Number(a.properties.line)).toBeGreaterThan(0);
    }
    expect(run.summary).toContain(CANDIDATE);
    // …and in the pull request itself: the summary as the topo/validate check run on the head commit.
    expect(run.outputs['summary-location']).toBe('check-run');
    const check = gh.state.checkRuns.find((c) => c.name === 'topo/validate' && c.headSha === pull.head.sha);
    expect(check?.conclusion).toBe('success');
    expect(check?.output.summary).toContain(CANDIDATE);
  });

  it('`/topo submit` by a collaborator submits the twin to the local Slurm', async () => {
    const comment = gh.comment(repo, pull.number, 'alice', '/topo submit');
    const run = await act('submit', issueCommentEvent(gh, comment));
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.outputs).toMatchObject({ command: 'submit', outcome: 'done' });
    expect(gh.state.reactions.filter((r) => r.commentId === comment.id).map((r) => r.content)).toEqual([
      'eyes',
      'rocket',
    ]);
    const calls = sbatchCalls();
    expect(calls).toHaveLength(1);
    const jobName = calls[0]?.find((a) => a.startsWith('--job-name='))?.slice('--job-name='.length);
    // `topo-<experiment>-<candidate>-<topology hash>-<run label>`: a label of its own per submission
    expect(jobName).toMatch(new RegExp(`^topo-${EXPERIMENT}-${CANDIDATE}-[0-9a-f]{8}-[0-9a-f]{8}$`));
    expect(calls[0]).toContain(`wizard.run_name=${jobName}`);
    expect(slurmJobNames()).toContain(jobName);
  });

  it('a second `/topo submit` is idempotent: no second job', async () => {
    const comment = gh.comment(repo, pull.number, 'alice', '/topo submit');
    const run = await act('submit', issueCommentEvent(gh, comment));
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(sbatchCalls()).toHaveLength(1);
  });

  it('`/topo status` refreshes the monitor comment now', async () => {
    const comment = gh.comment(repo, pull.number, 'alice', '/topo status');
    const run = await act('submit', issueCommentEvent(gh, comment));
    expect(run.outputs, run.stdout + run.stderr).toEqual({ command: 'status', outcome: 'done' });
    expect(gh.state.commentsOn(repo, pull.number).at(-1)?.body).toMatch(
      /is \*\*(submitted|starting|warming|stabilising|stable)\*\*/,
    );
    expect(stickyComment(pull, `monitor-${CANDIDATE}`)).toBeDefined();
  });

  it('monitor passes until the comment shows `stable` with metrics and a chart', async () => {
    let body: string | undefined;
    const deadline = 200; // passes of about 1.5 s; at time scale 60 a run reaches its verdict in 2-3 minutes
    for (let pass = 0; pass < deadline; pass++) {
      const run = await act('monitor', scheduleEvent(gh, repo));
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      body = stickyComment(pull, `monitor-${CANDIDATE}`);
      if (body && /\bstable\b/i.test(body) && pull.labels.includes('topology:stable')) break;
      // A terminal state other than stable ends the wait: the assertions below show the comment.
      if (body && /^### .* — (failed|finished|stopped)$/m.test(body)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(body, 'the monitor never wrote its comment').toBeDefined();
    expect(body).toMatch(/\bstable\b/i);
    expect(body).toMatch(/seconds_per_rollout|seconds per rollout/i);
    expect(body).toContain('```mermaid');
    expect(body).toContain('<!-- topo:observation v1');
    expect(pull.labels).toContain('topology:stable');
    // Still one job, one sbatch: passes are idempotent.
    expect(sbatchCalls()).toHaveLength(1);
  });

  it('merging writes the record commit with the candidate’s entry on the default branch', async () => {
    const before = gh.state.branchSha(repo, repo.defaultBranch);
    gh.merge(pull, 'alice');
    const run = await act('record', pullRequestEvent(gh, pull, 'closed', { sender: 'alice' }));
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const files = gh.files(repo);
    const record = files.get(`experiments/${EXPERIMENT}.json`);
    expect(record, `experiments/${EXPERIMENT}.json on the default branch`).toBeDefined();
    expect(JSON.parse(record as string)).toMatchObject({ experiment_id: EXPERIMENT });
    expect(record).toContain(`"${CANDIDATE}"`);
    expect(files.get(`experiments/${EXPERIMENT}.md`)).toContain(CANDIDATE);
    const head = gh.state.branchSha(repo, repo.defaultBranch);
    expect(head).not.toBe(before);
    expect(gh.state.git.isAncestor(before, head)).toBe(true);
  });
});

describe('cancel', () => {
  it('`/topo cancel` cancels the candidate’s job', async () => {
    const name = 'cancel-me';
    const p = gh.openPull({
      repo,
      author: 'alice',
      title: name,
      head: name,
      files: { [`${FOLDER}/${name}.yaml`]: candidateYaml(name, 12) },
    });
    const submit = await act(
      'submit',
      issueCommentEvent(gh, gh.comment(repo, p.number, 'alice', '/topo submit')),
    );
    expect(submit.outputs.outcome, submit.stdout + submit.stderr).toBe('done');
    const job = slurmJobNames().find((n) => n.startsWith(`topo-${EXPERIMENT}-${name}-`));
    expect(job).toBeDefined();
    const cancel = await act(
      'submit',
      issueCommentEvent(gh, gh.comment(repo, p.number, 'alice', '/topo cancel')),
    );
    expect(cancel.outputs, cancel.stdout + cancel.stderr).toEqual({ command: 'cancel', outcome: 'done' });
    expect(gh.state.commentsOn(repo, p.number).at(-1)?.body).toMatch(/cancelled job \d+/);
    const live = execFileSync('squeue', ['-h', '-t', 'PD,R,CF', '-o', '%j'], {
      encoding: 'utf8',
      env: { ...process.env, ...env() },
    });
    expect(live.split('\n')).not.toContain(job);
    expect(p.labels.filter((l) => l.startsWith('topology:'))).toEqual([]);
  });
});

describe('labels only display state', () => {
  it('a `topology:submit` label added by a collaborator is removed with a reply and starts nothing', async () => {
    const name = 'by-label';
    const p = gh.openPull({
      repo,
      author: 'alice',
      title: name,
      head: name,
      files: { [`${FOLDER}/${name}.yaml`]: candidateYaml(name, 6) },
    });
    p.labels.push('topology:submit');
    const before = sbatchCalls().length;
    const run = await act(
      'submit',
      pullRequestEvent(gh, p, 'labeled', { label: 'topology:submit', sender: 'alice' }),
    );
    expect(run.outputs, run.stdout + run.stderr).toEqual({ command: 'label', outcome: 'refused' });
    expect(p.labels).not.toContain('topology:submit');
    expect(gh.state.commentsOn(repo, p.number).at(-1)?.body).toMatch(/comments `\/topo submit`/);
    expect(sbatchCalls()).toHaveLength(before);
    expect(slurmJobNames().some((n) => n.startsWith(`topo-${EXPERIMENT}-${name}-`))).toBe(false);
  });
});

describe('refusals', () => {
  it('refuses `/topo submit` on a fork pull request, and nothing reaches sbatch', async () => {
    const fork = gh.fork(repo, 'mallory');
    const forkPull = gh.openPull({
      repo,
      headRepo: fork,
      author: 'mallory',
      title: 'fork candidate',
      head: 'fork-candidate',
      files: { [`${FOLDER}/fork-candidate.yaml`]: candidateYaml('fork-candidate', 10) },
    });
    const before = sbatchCalls().length;
    const comment = gh.comment(repo, forkPull.number, 'alice', '/topo submit');
    const run = await act('submit', issueCommentEvent(gh, comment));
    expect(run.exitCode).toBe(0);
    expect(run.outputs.outcome).toBe('refused');
    expect(gh.state.commentsOn(repo, forkPull.number).at(-1)?.body).toMatch(
      /not available on pull requests from forks/,
    );
    expect(sbatchCalls()).toHaveLength(before);
  });

  it('refuses a non-collaborator, saying why', async () => {
    const other = gh.openPull({
      repo,
      author: 'alice',
      title: 'another candidate',
      head: 'another',
      files: { [`${FOLDER}/another.yaml`]: candidateYaml('another', 14) },
    });
    const before = sbatchCalls().length;
    const comment = gh.comment(repo, other.number, 'stranger', '/topo submit');
    const run = await act('submit', issueCommentEvent(gh, comment), 'stranger');
    expect(run.outputs.outcome).toBe('refused');
    expect(gh.state.commentsOn(repo, other.number).at(-1)?.body).toMatch(
      /Sorry @stranger, `\/topo submit` needs write access/,
    );
    expect(sbatchCalls()).toHaveLength(before);
  });

  const maliciousFiles = (): Record<string, string> => {
    const dir = join(repoRoot, 'test/fixtures/github/malicious');
    const files: Record<string, string> = {};
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml'))) {
      files[`${FOLDER}/${f}`] = readFileSync(join(dir, f), 'utf8');
    }
    return files;
  };

  it('`/topo submit` of malicious candidates never reaches sbatch', async () => {
    // One malicious file per pull request, so the refusal is about the file, not about the count.
    for (const [path, text] of Object.entries(maliciousFiles())) {
      const name = path.split('/').pop()?.replace('.yaml', '') as string;
      const one = gh.openPull({
        repo,
        author: 'alice',
        title: name,
        head: `evil-${name}`,
        files: { [path]: text },
      });
      const before = sbatchCalls().length;
      const comment = gh.comment(repo, one.number, 'alice', '/topo submit');
      const run = await act('submit', issueCommentEvent(gh, comment));
      expect(run.exitCode, `${name}: ${run.stdout}${run.stderr}`).toBe(0);
      expect(run.outputs.outcome, name).toBe('refused');
      expect(gh.state.commentsOn(repo, one.number).at(-1)?.body, name).toMatch(
        /does not pass validation against the default branch's experiment and rules, so it was not submitted/,
      );
      expect(gh.state.reactions.filter((r) => r.commentId === comment.id).map((r) => r.content)).toEqual([
        'eyes',
        'confused',
      ]);
      expect(sbatchCalls(), name).toHaveLength(before);
    }
    expect(existsSync('/tmp/topo-pwned')).toBe(false);
  });

  it('rejects malicious candidates at validate with an error annotation on each file', async () => {
    const files = maliciousFiles();
    const evil = gh.openPull({ repo, author: 'alice', title: 'evil', head: 'evil', files });
    const run = await act('validate', pullRequestEvent(gh, evil, 'opened'));
    expect(run.exitCode, 'the job fails: its check is red').not.toBe(0);
    const errors = run.annotations.filter((a) => a.command === 'error');
    for (const path of Object.keys(files)) {
      expect(
        errors.some((a) => a.properties.file === path && Number(a.properties.line) > 0),
        `an error annotation at a line of ${path}`,
      ).toBe(true);
    }
    expect(existsSync('/tmp/topo-pwned')).toBe(false);
  });
});
