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
  'runs-on'?: string | string[];
  permissions?: Json | string;
  steps: Step[];
  if?: string;
  uses?: string;
  environment?: string;
  concurrency?: { group: string; 'cancel-in-progress'?: boolean };
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

const WRITE = { contents: 'read', checks: 'write', issues: 'write', 'pull-requests': 'write' } as const;
/** The monitor also reads the queued workflow runs its watch loop yields to (actions), pushes the
 * autopilot's bot branches (contents) and writes its dashboard issue (issues). */
const MONITOR = { ...WRITE, actions: 'read', contents: 'write' } as const;
/** Each caller, the reusable workflow it calls and the permissions it grants. */
const CALLERS = {
  'topology-validate.yml': {
    calls: 'reusable-validate.yml',
    permissions: { checks: 'write', contents: 'read', 'pull-requests': 'read' },
  },
  'topology-submit.yml': { calls: 'reusable-submit.yml', permissions: WRITE },
  'topology-monitor.yml': { calls: 'reusable-monitor.yml', permissions: MONITOR },
  'topology-record.yml': {
    calls: 'reusable-record.yml',
    permissions: { contents: 'write', 'pull-requests': 'write' },
  },
} as const;
/** Reusable workflows: runner kind and the exact permissions of every job. */
const REUSABLE = {
  'reusable-validate.yml': { selfHosted: false, permissions: CALLERS['topology-validate.yml'].permissions },
  'reusable-submit.yml': { selfHosted: true, permissions: WRITE },
  'reusable-monitor.yml': { selfHosted: true, permissions: MONITOR },
  'reusable-record.yml': { selfHosted: true, permissions: CALLERS['topology-record.yml'].permissions },
} as const;
const OTHERS = {
  'ci.yml': { contents: 'read' },
  'pages.yml': { contents: 'read', pages: 'write', 'id-token': 'write' },
} as const;
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  repository: { url: string };
};
/** `uses:` of this project's own actions in a reusable workflow: the repository at the current major tag. */
const ownRepo = pkg.repository.url.replace(/^https:\/\/github\.com\//, '').replace(/\.git$/, '');
const ownAction = new RegExp(
  `^${ownRepo.replace('/', '\\/')}\\/actions\\/([a-z-]+)@v${pkg.version.split('.')[0]}$`,
);

describe('workflow and action files pass the schema validator', () => {
  it('finds the callers, the reusable workflows and the project workflows', () => {
    expect(workflowFiles).toEqual(
      [...Object.keys(CALLERS), ...Object.keys(REUSABLE), ...Object.keys(OTHERS)].sort(),
    );
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
  const steps = Object.values(wf.jobs).flatMap((j) => j.steps ?? []);

  it('pins every third-party action by full commit SHA; own actions at the release major tag', () => {
    for (const step of steps.filter((s) => s.uses)) {
      const uses = step.uses as string;
      if (ownAction.test(uses)) {
        const name = ownAction.exec(uses)?.[1] as string;
        expect(existsSync(join(repoRoot, 'actions', name, 'action.yml')), uses).toBe(true);
        continue;
      }
      expect(uses, `${file}: ${uses}`).toMatch(/^[\w.-]+\/[\w.-]+(\/[\w./-]+)?@[0-9a-f]{40}$/);
    }
  });

  it('grants least privilege: nothing at the top (except ci), exact permissions per job', () => {
    expect(wf.permissions, `${file} must set top-level permissions`).toBeDefined();
    const expected =
      CALLERS[file as keyof typeof CALLERS]?.permissions ??
      REUSABLE[file as keyof typeof REUSABLE]?.permissions ??
      OTHERS[file as keyof typeof OTHERS];
    for (const [name, job] of Object.entries(wf.jobs)) {
      const effective = job.permissions ?? wf.permissions;
      expect(effective, `${file} job ${name}`).toEqual(expected);
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
});

describe.each(Object.entries(CALLERS))('caller %s', (file, { calls }) => {
  const wf = load(file);
  it(`only calls ./.github/workflows/${calls}, with no steps of its own`, () => {
    for (const job of Object.values(wf.jobs)) {
      expect(job.uses).toBe(`./.github/workflows/${calls}`);
      expect(job.steps).toBeUndefined();
      expect(job['runs-on']).toBeUndefined();
    }
    expect(existsSync(join(workflowDir, calls))).toBe(true);
  });
});

describe.each(Object.entries(REUSABLE))('reusable %s', (file, { selfHosted }) => {
  const wf = load(file);
  const text = readFileSync(join(workflowDir, file), 'utf8');
  it('is called only (workflow_call, documented inputs and secrets)', () => {
    expect(Object.keys(wf.on)).toEqual(['workflow_call']);
    const call = wf.on.workflow_call as { inputs?: Json; secrets?: Json };
    for (const [name, spec] of [...Object.entries(call.inputs ?? {}), ...Object.entries(call.secrets ?? {})])
      expect((spec as { description?: string }).description, `${file}: ${name}`).toBeTruthy();
    expect(wf.concurrency, 'concurrency lives on the jobs, after their if: filters').toBeUndefined();
    for (const job of Object.values(wf.jobs)) expect(job.concurrency?.['cancel-in-progress']).toBeDefined();
  });

  it(
    selfHosted
      ? 'runs on [self-hosted, <runner-label input, default slurm>] from the default branch only'
      : 'runs on a GitHub-hosted runner',
    () => {
      for (const [name, job] of Object.entries(wf.jobs)) {
        const runsOn = ([] as string[]).concat(job['runs-on'] as string | string[]);
        if (!selfHosted) {
          expect(runsOn, `${file} job ${name}`).toEqual(['ubuntu-latest']);
          continue;
        }
        expect(runsOn).toEqual(['self-hosted', expr('inputs.runner-label')]);
        const inputs = (wf.on.workflow_call as { inputs: Record<string, { default?: string }> }).inputs;
        expect(inputs['runner-label']?.default).toBe('slurm');
        const checkouts = job.steps.filter((s) => s.uses?.startsWith('actions/checkout@'));
        expect(checkouts.length).toBe(1);
        for (const c of checkouts) {
          expect(c.with?.ref).toBe(expr('github.event.repository.default_branch'));
          expect(c.with?.repository).toBeUndefined();
        }
        // Only this project's actions and the pinned checkout; no shell steps.
        for (const s of job.steps) {
          expect(s.run, `${file}: no shell steps on the self-hosted runner`).toBeUndefined();
          expect(s.uses).toMatch(
            new RegExp(`${ownAction.source.slice(1, -1)}|^actions/checkout@[0-9a-f]{40}$`),
          );
        }
      }
      expect(text).not.toMatch(/github\.(head_ref|event\.pull_request\.head\.(sha|ref))/);
    },
  );

  it('reads the SSH key only in a job that runs in the default-branch environment', () => {
    for (const [name, job] of Object.entries(wf.jobs)) {
      const usesKey = JSON.stringify(job).includes('secrets.TOPO_SSH_PRIVATE_KEY');
      if (usesKey) expect(job.environment, `${file} job ${name}`).toBeTruthy();
    }
  });
});

describe('triggers and concurrency', () => {
  it('validate: pull requests touching topologies/**, no secrets', () => {
    const wf = load('topology-validate.yml');
    expect((wf.on.pull_request as Json).paths).toEqual(['topologies/**']);
    for (const f of ['topology-validate.yml', 'reusable-validate.yml'])
      expect(readFileSync(join(workflowDir, f), 'utf8')).not.toMatch(/\$\{\{\s*secrets\./);
  });

  it('submit: /topo comments and the label; only commands enter the group, per pull request', () => {
    const wf = load('topology-submit.yml');
    expect(wf.on.issue_comment).toEqual({ types: ['created'] });
    expect(wf.on.pull_request).toEqual({ types: ['labeled'] });
    expect(wf.concurrency).toBeUndefined();
    const reusable = load('reusable-submit.yml');
    const command = reusable.jobs.command as Job;
    expect(command.if).toMatch(/startsWith\(github\.event\.comment\.body, '\/topo'\)/);
    expect(command.concurrency).toEqual({
      group: `topology-submit-${expr('github.event.issue.number')}`,
      'cancel-in-progress': false,
    });
    expect(command.environment).toBe(expr('inputs.environment'));
    const label = reusable.jobs.label as Job;
    expect(label.if).toMatch(/startsWith\(github\.event\.label\.name, 'topology:'\)/);
    expect(label.if).toMatch(/head\.repo\.full_name == github\.repository/);
    expect(JSON.stringify(label)).not.toContain('secrets.');
  });

  it('monitor: every 5 minutes and on demand, passes never overlap', () => {
    const wf = load('topology-monitor.yml');
    expect(wf.on.schedule).toEqual([{ cron: '*/5 * * * *' }]);
    expect(wf.on).toHaveProperty('workflow_dispatch');
    expect(load('reusable-monitor.yml').jobs.monitor?.concurrency).toEqual({
      group: 'topology-monitor',
      'cancel-in-progress': false,
    });
  });

  it('monitor: the watch loop ends before the next scheduled pass and inside the job timeout', () => {
    const reusable = load('reusable-monitor.yml');
    const input = (reusable.on.workflow_call as { inputs: Record<string, { default?: unknown }> }).inputs[
      'watch-minutes'
    ];
    const minutes = Number(input?.default);
    // cron every 5 minutes: the loop gives the runner back a minute before the next pass
    expect(minutes).toBe(4);
    const job = reusable.jobs.monitor as Job & { 'timeout-minutes'?: number };
    expect(job['timeout-minutes']).toBeGreaterThan(minutes + 2);
    const step = (job.steps ?? []).find((x) => String(x.uses ?? '').includes('actions/monitor'));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression, not a template
    expect(step?.with?.['watch-minutes']).toBe('${{ inputs.watch-minutes }}');
  });

  it('record: pull request closed or by hand for one pull request (input pr), not for forks', () => {
    const wf = load('topology-record.yml');
    expect((wf.on.pull_request as Json).types).toEqual(['closed']);
    expect((wf.on.workflow_dispatch as { inputs: Json }).inputs).toHaveProperty('pr');
    const job = load('reusable-record.yml').jobs.record as Job;
    expect(job.if).toMatch(/github\.event_name == 'workflow_dispatch'/);
    expect(job.if).toMatch(/github\.event\.pull_request\.head\.repo\.full_name == github\.repository/);
    expect(job.steps.find((s) => s.uses?.includes('/actions/record@'))?.with?.pr).toBe(expr('inputs.pr'));
  });

  it('ci: checks the bundles', () => {
    const text = readFileSync(join(workflowDir, 'ci.yml'), 'utf8');
    expect(text).toContain('node scripts/build.mjs --check');
  });

  it('ci: a release tag fails unless its workflows pin every action by full SHA', () => {
    const wf = parse(readFileSync(join(workflowDir, 'ci.yml'), 'utf8')) as {
      jobs: { check: { steps: { if?: string; run?: string; with?: Record<string, unknown> }[] } };
    };
    const steps = wf.jobs.check.steps;
    const verify = steps.find((s) => s.run?.includes('scripts/release.mjs --verify'));
    expect(verify?.if).toBe("startsWith(github.ref, 'refs/tags/v')");
    // the release commit the tag's workflows pin is the tag's parent: the checkout must hold it
    expect(steps[0]?.with?.['fetch-depth']).toBe(2);
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
