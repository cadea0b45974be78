// Runs a bundled action (actions/<name>/dist/index.js) as a child process with the environment a
// runner gives it: event name and payload file, API URL, repository, token, INPUT_* (with the
// action.yml defaults filled in, as the runner does), and the file commands (GITHUB_OUTPUT,
// GITHUB_STEP_SUMMARY, GITHUB_STATE, GITHUB_ENV). Returns the exit code, the output, the parsed
// workflow commands, the summary and the outputs. Run `npm run build` first.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { EventFile } from './events.js';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  message: string;
}

export interface ActionRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  commands: WorkflowCommand[];
  /** `::error`/`::warning`/`::notice` annotations. */
  annotations: WorkflowCommand[];
  /** Values registered with `::add-mask::`. */
  masks: string[];
  summary: string;
  outputs: Record<string, string>;
  env: Record<string, string>;
}

export interface RunActionOptions {
  event: EventFile;
  /** Local GitHub API base URL. */
  apiUrl: string;
  repository: string;
  token: string;
  inputs?: Record<string, string>;
  env?: Record<string, string>;
  /** GITHUB_WORKSPACE; a fresh folder by default. */
  workspace?: string;
  actor?: string;
  timeoutMs?: number;
}

/** GitHub's escaping of workflow command data and properties, reversed. */
function unescapeCommand(text: string): string {
  return text
    .replaceAll('%0D', '\r')
    .replaceAll('%0A', '\n')
    .replaceAll('%3A', ':')
    .replaceAll('%2C', ',')
    .replaceAll('%25', '%');
}

export function parseWorkflowCommands(stdout: string): WorkflowCommand[] {
  const out: WorkflowCommand[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^::([a-z-]+)( [^:]*)?::(.*)$/.exec(line);
    if (!m) continue;
    const properties: Record<string, string> = {};
    for (const pair of (m[2] ?? '').trim().split(',').filter(Boolean)) {
      const eq = pair.indexOf('=');
      properties[pair.slice(0, eq)] = unescapeCommand(pair.slice(eq + 1));
    }
    out.push({ command: m[1] as string, properties, message: unescapeCommand(m[3] ?? '') });
  }
  return out;
}

/** The `name<<delimiter … delimiter` blocks (and legacy `name=value`) of a file command. */
export function parseFileCommand(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, key, delimiter] = heredoc as unknown as [string, string, string];
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delimiter; i++) value.push(lines[i] as string);
      out[key] = value.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/** Evaluates the `${{ github.… }}` defaults an action.yml may use; anything else is an error. */
function evaluateDefault(value: string, context: Record<string, unknown>): string {
  return value.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    if (!/^github(\.[A-Za-z_][A-Za-z0-9_-]*)+$/.test(expr)) {
      throw new Error(`run-action: unsupported expression \${{ ${expr} }} in an action.yml default`);
    }
    let current: unknown = context;
    for (const key of expr.split('.')) current = (current as Record<string, unknown> | undefined)?.[key];
    return current === undefined || current === null ? '' : String(current);
  });
}

export async function runAction(name: string, options: RunActionOptions): Promise<ActionRun> {
  const actionDir = join(repoRoot, 'actions', name);
  const entry = join(actionDir, 'dist/index.js');
  if (!existsSync(join(actionDir, 'action.yml'))) {
    throw new Error(`action "${name}" does not exist: actions/${name}/action.yml is missing`);
  }
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\``);
  const metadata = parse(readFileSync(join(actionDir, 'action.yml'), 'utf8')) as {
    inputs?: Record<string, { default?: string; required?: boolean }>;
  };

  const temp = mkdtempSync(join(tmpdir(), `topo-action-${name}-`));
  const runnerTemp = join(temp, 'runner-temp');
  const workspace = options.workspace ?? join(temp, 'workspace');
  mkdirSync(runnerTemp, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  const files = {
    event: join(temp, 'event.json'),
    output: join(temp, 'output'),
    summary: join(temp, 'step-summary.md'),
    state: join(temp, 'state'),
    env: join(temp, 'env'),
    path: join(temp, 'path'),
  };
  writeFileSync(files.event, JSON.stringify(options.event.payload, null, 2));
  for (const f of [files.output, files.summary, files.state, files.env, files.path]) writeFileSync(f, '');

  const payload = options.event.payload as Record<string, unknown>;
  const pull = (payload.pull_request ?? undefined) as
    | { head?: { sha?: string }; number?: number }
    | undefined;
  const sha = pull?.head?.sha ?? '0'.repeat(40);
  const ref = pull?.number ? `refs/pull/${pull.number}/merge` : 'refs/heads/main';
  const githubContext = {
    github: {
      token: options.token,
      repository: options.repository,
      event_name: options.event.eventName,
      event: payload,
      sha,
      ref,
      actor: options.actor ?? 'octocat',
      workspace,
      api_url: options.apiUrl,
      server_url: options.apiUrl,
    },
  };

  const inputEnv: Record<string, string> = {};
  const given = options.inputs ?? {};
  for (const [key, spec] of Object.entries(metadata.inputs ?? {})) {
    const value =
      given[key] ??
      (spec.default !== undefined ? evaluateDefault(String(spec.default), githubContext) : undefined);
    if (value !== undefined) inputEnv[`INPUT_${key.replace(/ /g, '_').toUpperCase()}`] = value;
  }
  for (const key of Object.keys(given)) {
    if (!(key in (metadata.inputs ?? {})))
      throw new Error(`run-action: ${name} has no input "${key}" in its action.yml`);
  }

  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? temp,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: options.event.eventName,
    GITHUB_EVENT_PATH: files.event,
    GITHUB_API_URL: options.apiUrl,
    GITHUB_SERVER_URL: options.apiUrl,
    GITHUB_GRAPHQL_URL: `${options.apiUrl}/graphql`,
    GITHUB_REPOSITORY: options.repository,
    GITHUB_REPOSITORY_OWNER: options.repository.split('/')[0] as string,
    GITHUB_SHA: sha,
    GITHUB_REF: ref,
    GITHUB_ACTOR: options.actor ?? 'octocat',
    GITHUB_WORKFLOW: `topology-${name}`,
    GITHUB_JOB: name,
    GITHUB_RUN_ID: '1',
    GITHUB_RUN_NUMBER: '1',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_ACTION: name,
    GITHUB_ACTION_PATH: actionDir,
    GITHUB_WORKSPACE: workspace,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_STATE: files.state,
    GITHUB_ENV: files.env,
    GITHUB_PATH: files.path,
    GITHUB_TOKEN: options.token,
    RUNNER_TEMP: runnerTemp,
    RUNNER_OS: 'Linux',
    RUNNER_ARCH: 'X64',
    RUNNER_NAME: 'local-test-runner',
    ...inputEnv,
    ...(options.env ?? {}),
  };

  const child = spawn(process.execPath, [entry], { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const timeoutMs = options.timeoutMs ?? 120_000;
  const exitCode = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `action ${name} did not finish within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code ?? 1);
    });
  });

  const commands = parseWorkflowCommands(stdout);
  return {
    exitCode,
    stdout,
    stderr,
    commands,
    annotations: commands.filter((c) => ['error', 'warning', 'notice'].includes(c.command)),
    masks: commands.filter((c) => c.command === 'add-mask').map((c) => c.message),
    summary: readFileSync(files.summary, 'utf8'),
    outputs: parseFileCommand(readFileSync(files.output, 'utf8')),
    env: parseFileCommand(readFileSync(files.env, 'utf8')),
  };
}
