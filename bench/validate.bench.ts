// Benchmark of validation (printed, not asserted):
//  1. throughput: 1,000 generated candidate files of one experiment, validated in one call (files/s),
//     and the same through the CLI bundle (`node dist/topo.js validate --json <folder>`, process included);
//  2. cold start: a fresh `node actions/validate/dist/index.js` up to its first decision, and a fresh
//     `node dist/topo.js validate <one candidate>` (ajv compile included). Medians of repeated runs.
// Run: npm run build && npm run bench -- validate
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileSystemSource, validateFiles } from '../src/usecases/validate.js';

const root = process.env.TOPO_REPO_ROOT ?? process.cwd();
const N = 1000;
const EXP = 'topology-opt-vavam-ord-20261202';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** A deterministic pseudo-random generator (the same files on every run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function generate(dir: string): string[] {
  const topologies = join(dir, 'topologies');
  mkdirSync(join(topologies, EXP), { recursive: true });
  cpSync(join(root, 'topologies/presets'), join(topologies, 'presets'), { recursive: true });
  cpSync(join(root, 'topologies/clusters.yaml'), join(topologies, 'clusters.yaml'));
  cpSync(join(root, 'topologies', EXP, 'experiment.yaml'), join(topologies, EXP, 'experiment.yaml'));
  cpSync(join(root, 'topologies', EXP, 'baseline.yaml'), join(topologies, EXP, 'baseline.yaml'));
  const rand = rng(42);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)] as T;
  const files: string[] = [];
  for (let i = 0; i < N; i++) {
    const name = `gen-${String(i).padStart(4, '0')}`;
    // Mostly valid variations; about one in ten carries a mistake (a typo or an impossible GPU).
    const renderer = pick([
      [0, 1, 2, 3],
      [0, 0, 1, 1, 2, 2, 3, 3],
      [0, 1, 2, 3, 0, 1],
    ]);
    const concurrency = Math.max(1, Math.round(64 / renderer.length));
    const workers = 1 + (i % 32);
    const mistake = i % 10 === 9 ? pick(['    nr_wrokers: 4\n', '    nr_workers: 400\n']) : '';
    const text = [
      `name: ${name}`,
      'parent: baseline',
      `hypothesis: generated variation ${i}`,
      'topology:',
      '  defines:',
      `    nre_cache_size: ${concurrency + 1 + (i % 3)}`,
      '  services:',
      '    renderer:',
      `      gpus: [${renderer.join(', ')}]`,
      '    driver:',
      `      replicas_per_container: ${pick([6, 7, 8])}`,
      '  runtime:',
      `    nr_workers: ${workers}`,
      mistake.trimEnd(),
      '    endpoints:',
      '      renderer:',
      `        n_concurrent_rollouts: ${concurrency}`,
      // Makes every generated topology distinct, so duplicates do not dominate the findings.
      '  eval:',
      `    num_processes: ${1 + i}`,
      '',
    ]
      .filter((l) => l !== '')
      .join('\n');
    const file = join('topologies', EXP, `${name}.yaml`);
    writeFileSync(join(dir, file), `${text}\n`);
    files.push(file);
  }
  return files;
}

/** Wall time and CPU time (user + system, via /usr/bin/time when present) of a fresh node process. */
function time(
  cmd: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): { ms: number; cpuMs: number; status: number | null } {
  const timer = existsSync('/usr/bin/time');
  const t0 = performance.now();
  const r = timer
    ? spawnSync('/usr/bin/time', ['-f', 'TOPO_CPU %U %S', process.execPath, ...cmd], {
        cwd,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      })
    : spawnSync(process.execPath, cmd, {
        cwd,
        env: { ...process.env, ...env },
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      });
  const ms = performance.now() - t0;
  const m = /TOPO_CPU ([0-9.]+) ([0-9.]+)/.exec(r.stderr ?? '');
  return { ms, cpuMs: m ? (Number(m[1]) + Number(m[2])) * 1000 : Number.NaN, status: r.status };
}

const dir = mkdtempSync(join(tmpdir(), 'topo-bench-validate-'));
try {
  const files = generate(dir);
  const source = fileSystemSource(dir);

  // Warm-up compiles the schemas once, as a long-lived process would.
  await validateFiles(files.slice(0, 1), { files: source });
  const runs: number[] = [];
  const cpu: number[] = [];
  let errors = 0;
  let warnings = 0;
  let rules = '';
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const report = await validateFiles(files, { files: source });
    runs.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
    errors = report.errorCount;
    warnings = report.warningCount;
    const tally = new Map<string, number>();
    for (const f of report.files)
      for (const i of [...f.errors, ...f.warnings]) tally.set(i.rule, (tally.get(i.rule) ?? 0) + 1);
    rules = [...tally].map(([k, v]) => `${k} ${v}`).join(', ');
  }
  const ms = median(runs);
  const cpuMs = median(cpu);
  console.log(
    `in-process: ${N} candidate files in ${ms.toFixed(0)} ms wall, ${cpuMs.toFixed(0)} ms CPU (median of ${runs.length}) = ${((N / ms) * 1000).toFixed(0)} files/s wall, ${((N / cpuMs) * 1000).toFixed(0)} files/s per CPU; ${errors} errors, ${warnings} warnings found (${rules})`,
  );

  const cli = join(root, 'bin/topo.js');
  const action = join(root, 'actions/validate/dist/index.js');
  if (!existsSync(join(root, 'dist/topo.js')) || !existsSync(action)) {
    console.log('bundles missing: run `npm run build` first for the CLI and cold-start figures');
  } else {
    const whole = time([cli, 'validate', '--json', join('topologies', EXP)], dir);
    console.log(
      `CLI bundle: \`topo validate --json\` over ${N + 1} files in ${whole.ms.toFixed(0)} ms wall, ${whole.cpuMs.toFixed(0)} ms CPU (process included) = ${(((N + 1) / whole.ms) * 1000).toFixed(0)} files/s wall (exit ${whole.status})`,
    );
    // Cold start on the worked example (3 candidates): validating one file reads its whole experiment.
    const small = mkdtempSync(join(tmpdir(), 'topo-bench-small-'));
    cpSync(join(root, 'topologies'), join(small, 'topologies'), { recursive: true });
    const one = join('topologies', EXP, 'renderer-split.yaml');
    const cold: ReturnType<typeof time>[] = [];
    const coldAction: ReturnType<typeof time>[] = [];
    const bare: ReturnType<typeof time>[] = [];
    for (let r = 0; r < 9; r++) {
      bare.push(time(['-e', '0'], dir));
      cold.push(time([cli, 'validate', one], small));
      // Without an event the action stops at its first decision: that is load + evaluation of the bundle.
      coldAction.push(time([action], dir, { GITHUB_EVENT_PATH: '', INPUT_TOKEN: 'bench' }));
    }
    const show = (xs: ReturnType<typeof time>[]) =>
      `${median(xs.map((x) => x.ms)).toFixed(0)} ms wall, ${median(xs.map((x) => x.cpuMs)).toFixed(0)} ms CPU (median of ${xs.length})`;
    const kib = (Number(spawnSync('stat', ['-c%s', action], { encoding: 'utf8' }).stdout) / 1024).toFixed(0);
    console.log(`node itself (node -e 0): ${show(bare)}`);
    console.log(
      `cold start, validate action bundle (${kib} KiB; load + evaluate up to its first decision): ${show(coldAction)}`,
    );
    console.log(
      `cold start, \`topo validate\` of one candidate (bundle load, schema compile, experiment read): ${show(cold)}`,
    );
    rmSync(small, { recursive: true, force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
