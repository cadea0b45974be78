// Real Optuna (Debian's python3-optuna): a TPE sampler and a Hyperband pruner driven over JSON lines
// by optuna_driver.py (ask-and-tell), trials 3 at a time, the full-run value reported every 5
// run-minutes (the same value ASHA reads). The study's best trial is the method's answer.
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { asyncTrials, type Context, type MethodResult } from './methods.js';
import { MAX_MINUTES } from './sim.js';
import { AXES, AXIS_NAMES, build, type Point } from './space.js';

export const OPTUNA_MISSING = 'optuna: not installed (apt-get install python3-optuna)';

/** Debian's interpreter, where python3-optuna installs (a pyenv or venv python3 earlier on PATH has no Debian packages). */
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** Optuna's version when `import optuna` works, else null. */
export function optunaVersion(): string | null {
  const r = spawnSync(PYTHON, ['-c', 'import optuna; print(optuna.__version__)'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * The bench's setup step: installs python3-optuna with apt-get when it is missing and the bench runs
 * as root; says what it did. Never needed by the tests.
 */
export function ensureOptuna(log: (line: string) => void): string | null {
  const have = optunaVersion();
  if (have) return have;
  if (process.getuid?.() !== 0) {
    log('optuna: missing, and not root: cannot apt-get install python3-optuna');
    return null;
  }
  log('optuna: missing; apt-get install -y python3-optuna');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let r = spawnSync('apt-get', ['install', '-y', '-q', 'python3-optuna'], { encoding: 'utf8', env });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-q'], { encoding: 'utf8', env });
    r = spawnSync('apt-get', ['install', '-y', '-q', 'python3-optuna'], { encoding: 'utf8', env });
  }
  if (r.status !== 0)
    log(`optuna: apt-get failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-2).join(' ')}`);
  return optunaVersion();
}

class Driver {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  constructor(root: string) {
    this.proc = spawn(PYTHON, [join(root, 'bench/campaign/optuna_driver.py')], { stdio: 'pipe' });
    this.lines = createInterface({ input: this.proc.stdout })[Symbol.asyncIterator]();
  }
  async call<T>(req: Record<string, unknown>): Promise<T> {
    this.proc.stdin.write(`${JSON.stringify(req)}\n`);
    const line = await this.lines.next();
    if (line.done) throw new Error('optuna driver ended');
    const out = JSON.parse(line.value) as T & { error?: string };
    if (out.error) throw new Error(out.error);
    return out;
  }
  close(): void {
    this.proc.stdin.end();
    this.proc.kill();
  }
}

/** A real Optuna study (TPE + HyperbandPruner), the baseline enqueued first. */
export async function optunaCampaign(ctx: Context, root: string): Promise<MethodResult> {
  const driver = new Driver(root);
  try {
    const space = Object.fromEntries(AXIS_NAMES.map((a) => [a, [...AXES[a]]]));
    await driver.call({
      op: 'init',
      seed: ctx.world.seed,
      space,
      enqueue: ctx.basePoint,
      min_resource: 15,
      max_resource: MAX_MINUTES,
      reduction_factor: 3,
    });
    const numbers = new Map<string, number>();
    const values = new Map<string, number>();
    let best: string | null = null;
    const ledger = await asyncTrials(ctx, {
      next: async () => {
        const { trial, params } = await driver.call<{ trial: number; params: Point }>({ op: 'ask' });
        const name = trial === 0 ? 'baseline' : `optuna-${trial}`;
        numbers.set(name, trial);
        return { name, topology: build(ctx.base, params) };
      },
      onReport: async (t, minute, v) => {
        if (minute >= MAX_MINUTES) return 'stop';
        const { prune } = await driver.call<{ prune: boolean }>({
          op: 'report',
          trial: numbers.get(t.name),
          step: minute,
          value: v,
        });
        return prune ? 'stop' : 'continue';
      },
      onEnd: async (t) => {
        const state = t.done === 'complete' ? 'complete' : t.done === 'error' ? 'fail' : 'pruned';
        await driver.call({ op: 'tell', trial: numbers.get(t.name), state, value: t.last?.v ?? null });
        if (state === 'complete' && t.last) values.set(t.name, t.last.v);
        const b = await driver.call<{ trial: number | null }>({ op: 'best' });
        best = b.trial === null ? null : b.trial === 0 ? 'baseline' : `optuna-${b.trial}`;
      },
      // the study's best trial (completed trials only, as study.best_trial)
      incumbent: async (trials) => trials.find((t) => t.name === best) ?? null,
    });
    return { ledger, stopReason: 'budget spent', rounds: 0, predictions: [] };
  } finally {
    driver.close();
  }
}
