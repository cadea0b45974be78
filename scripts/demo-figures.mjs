#!/usr/bin/env node
// The figures docs/demo.md prints, from a command anyone can run on the local cluster:
//   node scripts/demo-figures.mjs [--runs N] [--full]
// runs `topo demo` (--quick unless --full) N times (default 3), each into a folder of its own, and prints
// per run the baseline's and the best candidate's s/rollout (from the experiment record) and the wall
// time, then the median and the range. `--existing DIR…` reads folders of demo runs made before instead.
// Exits 1 when a demo run failed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** { baseline, best, bestName, change } of a demo output folder, from its experiment record. */
export function figuresOf(outDir) {
  const dir = join(outDir, 'experiments');
  const file = readdirSync(dir).find((f) => f.endsWith('.json'));
  if (!file) throw new Error(`${dir}: no experiment record`);
  const record = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const base = record.runs.find((r) => r.name === 'baseline');
  // each at its figure (src/record/figure.ts): the baseline at its projection, the best as decided
  const baseline =
    base?.verdict?.projected_full_run?.value ??
    base?.verdict?.value?.value ??
    base?.stable_metrics?.seconds_per_rollout_full_run ??
    null;
  const best = record.current_best?.stabilized_seconds_per_rollout_full_run ?? null;
  const bestName = record.current_best?.topology ?? null;
  // The change the monitor decided on (what the demo's terminal, comment and record say), else the ratio.
  const decision = record.runs.find((r) => r.name === bestName)?.monitor_decision;
  const decided = decision?.relative_change;
  return {
    baseline,
    best,
    bestName,
    change: decided?.value ?? (baseline && best ? best / baseline - 1 : null),
    // The decision's own spread: its 95% interval and the run-minute it was decided at.
    interval: decided && typeof decided.low === 'number' ? { low: decided.low, high: decided.high } : null,
    decidedAt: decision?.decided_at_minutes ?? null,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const pct = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(100 * x).toFixed(1)}%`;

/** The markdown table and the summary line of several runs ({ figures, wallSeconds }). */
export function summarise(runs) {
  const lines = [
    '| run | wall time | baseline s/rollout | best s/rollout (candidate) | change (decided) | its 95% interval | decided at |',
    '|---|---|---|---|---|---|---|',
  ];
  runs.forEach((r, i) => {
    const f = r.figures;
    lines.push(
      `| ${i + 1} | ${r.wallSeconds === null ? '—' : `${Math.round(r.wallSeconds)} s`} | ${f.baseline?.toFixed(2) ?? '—'} | ${f.best?.toFixed(2) ?? '—'} (${f.bestName ?? '—'}) | ${f.change === null ? '—' : pct(f.change)} | ${f.interval ? `${pct(f.interval.low)} to ${pct(f.interval.high)}` : '—'} | ${f.decidedAt === null || f.decidedAt === undefined ? '—' : `run-minute ${f.decidedAt}`} |`,
    );
  });
  const changes = runs.map((r) => r.figures.change).filter((c) => c !== null);
  const walls = runs.map((r) => r.wallSeconds).filter((w) => w !== null);
  if (changes.length)
    lines.push(
      '',
      `change of the best candidate against the baseline: median ${pct(median(changes))}, range ${pct(Math.min(...changes))} to ${pct(Math.max(...changes))} over ${changes.length} run(s)` +
        (walls.length
          ? `; wall time median ${Math.round(median(walls))} s, range ${Math.round(Math.min(...walls))}–${Math.round(Math.max(...walls))} s`
          : ''),
    );
  return lines.join('\n');
}

function arg(argv, name) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2);
  const runs = [];
  let failed = 0;
  const existing = argv.includes('--existing') ? argv.slice(argv.indexOf('--existing') + 1) : null;
  if (existing) {
    for (const dir of existing) runs.push({ figures: figuresOf(dir), wallSeconds: null });
  } else {
    const n = Number(arg(argv, '--runs') ?? 3);
    const base = mkdtempSync(join(tmpdir(), 'topo-demo-figures-'));
    for (let i = 1; i <= n; i++) {
      const out = join(base, `run-${i}`);
      const args = [
        join(root, 'bin/topo.js'),
        'demo',
        '--out',
        out,
        ...(argv.includes('--full') ? [] : ['--quick']),
      ];
      console.error(`run ${i}/${n}: node ${args.join(' ')}`);
      const started = Date.now();
      const r = spawnSync(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      const wallSeconds = (Date.now() - started) / 1000;
      if (r.status !== 0) {
        failed++;
        console.error(`run ${i}: topo demo exited ${r.status ?? r.signal}`);
        continue;
      }
      runs.push({ figures: figuresOf(out), wallSeconds });
    }
  }
  console.log(summarise(runs));
  process.exit(failed ? 1 : 0);
}
