// The workflows and action.yml files: valid against the workflow/action schemas
// (@action-validator/cli) and the security rules of docs/github.md checked over their YAML.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../../support/run-action.js';

type Json = Record<string, unknown>;
interface Step {
  uses?: string;
  run?: string;
  with?: Json;
  name?: string;
}
interface Job {
  'runs-on': string | string[];
  permissions?: Json | string;
  steps: Step[];
  if?: string;
}
interface Workflow {
  on: Json;
  permissions?: Json | string;
  concurrency?: { group: string; 'cancel-in-progress'?: boolean };
  jobs: Record<string, Job>;
}

const workflowDir = join(repoRoot, '.github/workflows');
const workflowFiles = readdirSync(workflowDir)
  .filter((f) => f.endsWith('.yml'))
  .sort();
const actionFiles = readdirSync(join(repoRoot, 'actions'))
  .filter((d) => existsSync(join(repoRoot, 'actions', d, 'action.yml')))
  .map((d) => `actions/${d}/action.yml`);
/** A GitHub expression as written in YAML (`${{ … }}`). */
const expr = (inner: string) => `\${{ ${inner} }}`;
const load = (file: string) => parse(readFileSync(join(workflowDir, file), 'utf8')) as Workflow;
const validator = join(repoRoot, 'node_modules/.bin/action-validator');

/**
 * Runs action-validator on a file. Its bundled schema (0.6.0) predates GitHub's `node24` runtime, so an
 * action.yml is validated as a copy with `using: node24` read as `node20`; the runtime itself is
 * asserted separately below.
 */
function validate(path: string): { ok: boolean; output: string } {
  let target = path;
  if (path.endsWith('action.yml')) {
    const dir = mkdtempSync(join(tmpdir(), 'action-yml-'));
    target = join(dir, 'action.yml');
    writeFileSync(target, readFileSync(path, 'utf8').replace(/using: "?node24"?/, 'using: node20'));
  }
  try {
    const out = execFileSync(validator, [target], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, output: out };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

const EXPECTED = {
  'topology-validate.yml': {
    selfHosted: false,
    permissions: { checks: 'write', contents: 'read', 'pull-requests': 'read' },
  },
  'topology-submit.yml': {
    selfHosted: true,
    permissions: { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  },
  'topology-monitor.yml': {
    selfHosted: true,
    permissions: { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' },
  },
  'topology-record.yml': { selfHosted: true, permissions: { contents: 'write', 'pull-requests': 'write' } },
  'ci.yml': { selfHosted: false, permissions: { contents: 'read' } },
} as const;

describe('workflow and action files pass the schema validator', () => {
  it('finds the five workflows', () => {
    expect(workflowFiles).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each([...workflowFiles.map((f) => `.github/workflows/${f}`), ...actionFiles])('%s', (file) => {
    const result = validate(join(repoRoot, file));
    expect(result.output.replace(/WARNING: Glob validation.*\n?/g, '')).toBe('');
    expect(result.ok).toBe(true);
  });

  it('the validator rejects a broken workflow (so a pass means something)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-'));
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, 'on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    stepz: []\n');
    expect(validate(bad).ok).toBe(false);
  });
});

describe.each(workflowFiles)('security rules: %s', (file) => {
  const wf = load(file);
  const expected = EXPECTED[file as keyof typeof EXPECTED];
  const steps = Object.values(wf.jobs).flatMap((j) => j.steps);

  it('pins every third-party action by full commit SHA', () => {
    for (const step of steps.filter((s) => s.uses && !s.uses.startsWith('./'))) {
      expect(step.uses, `${file}: ${step.uses}`).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/);
    }
  });

  it('grants least privilege: nothing at the top (except ci), exact permissions per job', () => {
    expect(wf.permissions, `${file} must set top-level permissions`).toBeDefined();
    for (const [name, job] of Object.entries(wf.jobs)) {
      const effective = job.permissions ?? wf.permissions;
      expect(effective, `${file} job ${name}`).toEqual(expected.permissions);
    }
    if (file !== 'ci.yml') expect(wf.permissions).toEqual({});
  });

  it('never uses pull_request_target', () => {
    expect(Object.keys(wf.on)).not.toContain('pull_request_target');
  });

  it('never interpolates event text into a shell', () => {
    for (const step of steps.filter((s) => s.run)) {
      expect(step.run, `${file}: ${step.run}`).not.toMatch(/\$\{\{\s*github\.(event|head_ref)/);
    }
  });

  it('checks out without persisting credentials', () => {
    for (const step of steps.filter((s) => s.uses?.startsWith('actions/checkout@'))) {
      expect(step.with?.['persist-credentials'], file).toBe(false);
    }
  });

  it(
    expected.selfHosted
      ? 'runs on [self-hosted, slurm] from the default branch only'
      : 'runs on a GitHub-hosted runner',
    () => {
      for (const [name, job] of Object.entries(wf.jobs)) {
        const runsOn = ([] as string[]).concat(job['runs-on']);
        if (!expected.selfHosted) {
          expect(runsOn, `${file} job ${name}`).toEqual(['ubuntu-latest']);
          continue;
        }
        expect(runsOn).toEqual(['self-hosted', 'slurm']);
        const checkouts = job.steps.filter((s) => s.uses?.startsWith('actions/checkout@'));
        expect(checkouts.length).toBe(1);
        for (const c of checkouts) expect(c.with?.ref).toBe(expr('github.event.repository.default_branch'));
        // Only actions from that checkout and the pinned checkout itself; no shell steps.
        for (const s of job.steps) {
          expect(s.run, `${file}: no shell steps on the self-hosted runner`).toBeUndefined();
          expect(s.uses).toMatch(/^(\.\/actions\/[a-z-]+|actions\/checkout@[0-9a-f]{40})$/);
        }
        const text = readFileSync(join(workflowDir, file), 'utf8');
        expect(text).not.toMatch(/github\.(head_ref|event\.pull_request\.head\.(sha|ref))/);
      }
    },
  );

  it('uses only local actions that exist', () => {
    for (const s of steps.filter((x) => x.uses?.startsWith('./'))) {
      expect(
        existsSync(join(repoRoot, s.uses as string, 'action.yml')),
        `${file}: ${s.uses}/action.yml`,
      ).toBe(true);
    }
  });
});

describe('triggers and concurrency', () => {
  it('validate: pull requests touching topologies/**, no secrets', () => {
    const wf = load('topology-validate.yml');
    expect((wf.on.pull_request as Json).paths).toEqual(['topologies/**']);
    expect(readFileSync(join(workflowDir, 'topology-validate.yml'), 'utf8')).not.toMatch(
      /\$\{\{\s*secrets\./,
    );
  });

  it('submit: /topo comments and the label, one group per pull request', () => {
    const wf = load('topology-submit.yml');
    expect(wf.on.issue_comment).toEqual({ types: ['created'] });
    expect(wf.on.pull_request).toEqual({ types: ['labeled'] });
    expect(wf.concurrency?.group).toBe(
      `topology-submit-${expr('github.event.issue.number || github.event.pull_request.number')}`,
    );
    expect(wf.concurrency?.['cancel-in-progress']).toBe(false);
    expect(wf.jobs.submit?.if).toMatch(/startsWith\(github\.event\.comment\.body, '\/topo'\)/);
  });

  it('monitor: every 5 minutes and on demand, passes never overlap', () => {
    const wf = load('topology-monitor.yml');
    expect(wf.on.schedule).toEqual([{ cron: '*/5 * * * *' }]);
    expect(wf.on).toHaveProperty('workflow_dispatch');
    expect(wf.concurrency).toEqual({ group: 'topology-monitor', 'cancel-in-progress': false });
  });

  it('record: pull request closed, contents: write, not for forks', () => {
    const wf = load('topology-record.yml');
    expect((wf.on.pull_request as Json).types).toEqual(['closed']);
    expect(wf.jobs.record?.if).toBe('github.event.pull_request.head.repo.full_name == github.repository');
  });

  it('ci: checks the bundles', () => {
    const text = readFileSync(join(workflowDir, 'ci.yml'), 'utf8');
    expect(text).toContain('node scripts/build.mjs --check');
  });
});

describe('action.yml files', () => {
  const docs = existsSync(join(repoRoot, 'docs/github.md'))
    ? readFileSync(join(repoRoot, 'docs/github.md'), 'utf8')
    : '';
  it.each(actionFiles)('%s runs its committed bundle on node24 and its inputs are documented', (file) => {
    const action = parse(readFileSync(join(repoRoot, file), 'utf8')) as {
      runs: { using: string; main: string };
      inputs?: Record<string, { description?: string }>;
    };
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js' });
    expect(existsSync(join(repoRoot, file, '..', 'dist/index.js'))).toBe(true);
    const name = file.split('/')[1] as string;
    for (const [input, spec] of Object.entries(action.inputs ?? {})) {
      expect(spec.description, `${file}: input ${input} needs a description`).toBeTruthy();
      expect(docs, `docs/github.md must document input \`${input}\` of actions/${name}`).toMatch(
        new RegExp(`\\|\\s*\`${name}\`\\s*\\|\\s*\`${input}\`\\s*\\|`),
      );
    }
  });
});
