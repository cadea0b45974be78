// The demo's handle on the local cluster: `bash scripts/local-cluster up|down|env --json`
// (owned by the Slurm part). Argv arrays only, never a shell string.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { ClusterEnv, DemoCluster } from './run.js';

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(argv: string[], env: NodeJS.ProcessEnv, onStderrLine?: (line: string) => void): Promise<Ran> {
  return new Promise((resolvePromise, reject) => {
    // detached: a Ctrl-C in the terminal reaches only the demo, which then runs `down` itself.
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      stderr += text;
      if (!onStderrLine) return;
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) onStderrLine(line);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (onStderrLine && partial.trim()) onStderrLine(partial);
      resolvePromise({ code: code ?? 1, stdout, stderr });
    });
  });
}

export function parseClusterEnv(text: string): ClusterEnv & { up?: boolean } {
  const value = JSON.parse(text) as ClusterEnv & { up?: boolean };
  for (const key of ['stateDir', 'prometheusUrl', 'clustersFile', 'fileSdDir', 'runDir'] as const) {
    if (typeof value[key] !== 'string') throw new Error(`local-cluster env --json: "${key}" is missing`);
  }
  if (typeof value.timeScale !== 'number')
    throw new Error('local-cluster env --json: "timeScale" is missing');
  return value;
}

export function localCluster(root: string, env: NodeJS.ProcessEnv): DemoCluster {
  const script = join(root, 'scripts', 'local-cluster');
  const readEnv = async (): Promise<ClusterEnv & { up?: boolean }> => {
    const ran = await run(['bash', script, 'env', '--json'], env);
    if (ran.code !== 0) throw new Error(`bash ${script} env --json failed: ${ran.stderr.trim()}`);
    return parseClusterEnv(ran.stdout);
  };
  return {
    async status() {
      const value = await readEnv();
      return value.up ? value : null;
    },
    async anyRunning() {
      const ran = await run(['bash', script, 'status'], env);
      return /\brunning \(pid/.test(ran.stdout);
    },
    async up(log) {
      const ran = await run(['bash', script, 'up'], env, log);
      if (ran.code !== 0) throw new Error(`bash ${script} up failed (exit ${ran.code}); see the lines above`);
      const value = await readEnv();
      if (!value.up)
        throw new Error(`bash ${script} up finished but the cluster is not up: ${script} status`);
      return value;
    },
    async down(log) {
      const ran = await run(['bash', script, 'down'], env, log);
      if (ran.code !== 0) throw new Error(`bash ${script} down failed (exit ${ran.code})`);
    },
  };
}
