// Issue 14's goal, as tests: AlpaSim's own input is accepted. Every file preset starts an experiment from an
// ordinary AlpaSim command and validates on an 80 GiB cluster, with and without trafficsim=catk and
// +physics=disabled, with capacity equal to the preset's own comments; daemon is recognised as CLI-driven;
// the corpus of commands composed from AlpaSim's docs parses, inits and validates; and no override outside
// AlpaSim's config tree reaches sbatch.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PRESETS, type ServiceName } from '../../../src/catalog/alpasim.js';
import { fileSystemSource } from '../../../src/cli/commands/validate.js';
import { capacitySummary } from '../../../src/topology/capacity.js';
import { initExperiment } from '../../../src/topology/init.js';
import { overrideProblem } from '../../../src/topology/overrides.js';
import { parseRunCommand, RunCommandError } from '../../../src/topology/run-command.js';
import { renderCandidateFile, toJsonReport, validateFiles } from '../../../src/usecases/validate.js';
import { REPO } from './helpers.js';

const SCRIPT = 'src/tools/run-on-slurm/submit.sh';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'topo-alpasim-'));
  dirs.push(dir);
  cpSync(join(REPO, 'topologies/presets'), join(dir, 'presets'), { recursive: true });
  cpSync(join(REPO, 'topologies/clusters.yaml'), join(dir, 'clusters.yaml'));
  return dir;
}

/** Capacity per service from the preset's own comments (`# REND: 4 x 1 x 3 = 12`). */
function commentCapacity(preset: string): Partial<Record<ServiceName, number>> {
  const names: Record<string, ServiceName> = {
    REND: 'renderer',
    DRIV: 'driver',
    PHYS: 'physics',
    CONT: 'controller',
    TRAF: 'trafficsim',
  };
  const text = readFileSync(join(REPO, 'topologies/presets', `${preset}.yaml`), 'utf8');
  const out: Partial<Record<ServiceName, number>> = {};
  for (const m of text.matchAll(/#\s*(REND|DRIV|PHYS|CONT|TRAF):.*=\s*(\d+)\s*$/gm))
    out[names[m[1]!]!] = Number(m[2]);
  return out;
}

async function initAndValidate(command: string, date: string) {
  const dir = workspace();
  const w = initExperiment(command, dir, { date, cluster: 'ord' });
  const report = await validateFiles([w.experimentFile, w.baselineFile], { files: fileSystemSource('/') });
  const rendered = await renderCandidateFile(w.baselineFile, { files: fileSystemSource('/') });
  return { w, report, rendered };
}

describe('every AlpaSim topology preset starts an experiment and validates on an 80 GiB cluster', () => {
  const variants: Array<[string, string[]]> = [
    ['plain', []],
    ['trafficsim=catk', ['trafficsim=catk']],
    ['+physics=disabled', ['+physics=disabled']],
    ['both', ['trafficsim=catk', '+physics=disabled']],
  ];
  const cases = PRESETS.flatMap((p) => variants.map(([v, o]) => [p, v, o] as const));
  it.each(cases)('%s with %s', async (preset, _variant, overrides) => {
    const cmd = `sbatch ${SCRIPT} deploy=ord topology=${preset} driver=vavam ${overrides.join(' ')}`;
    const { w, report, rendered } = await initAndValidate(cmd, '20260401');
    expect(report.files.flatMap((f) => f.errors)).toEqual([]);
    expect(rendered.submission?.argv[0]).toBe('sbatch');
    const summary = capacitySummary(w.baseline.topology);
    const expected = commentCapacity(preset);
    const physicsOff = overrides.includes('+physics=disabled');
    const catk = overrides.includes('trafficsim=catk');
    for (const [svc, cap] of Object.entries(expected) as [ServiceName, number][]) {
      if (svc === 'physics' && physicsOff) continue;
      if (svc === 'trafficsim' && !catk) continue;
      expect(summary.byService[svc], `${preset} ${svc}`).toBe(cap);
    }
    // Skipped services count for nothing: not in capacity, not in memory.
    expect('physics' in summary.byService).toBe(!physicsOff);
    expect('trafficsim' in summary.byService).toBe(catk);
    expect(summary.inFlight).toBe(Math.min(...Object.values(expected)));
    const json = toJsonReport(report).files.find((f) => f.path === w.baselineFile);
    expect(json?.candidate?.capacity).toEqual(summary.byService);
    expect(json?.candidate?.gpu_memory?.length).toBeGreaterThan(0);
    expect(json?.candidate?.gpu_memory_measured).toBe(false);
  });

  it('1gpu + trafficsim=catk on a 40 GiB GPU is a warning marked unmeasured, not a refusal (issue 14.4)', async () => {
    const dir = workspace();
    const clusters = readFileSync(join(dir, 'clusters.yaml'), 'utf8').replace(
      'gpu_memory_gib: 80',
      'gpu_memory_gib: 40',
    );
    writeFileSync(join(dir, 'clusters.yaml'), clusters);
    const w = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=1gpu driver=vavam trafficsim=catk`, dir, {
      date: '20260402',
      cluster: 'ord',
    });
    const report = await validateFiles([w.baselineFile], { files: fileSystemSource('/') });
    const file = report.files[0]!;
    expect(file.errors).toEqual([]);
    const memory = file.warnings.filter((i) => i.rule === 'gpu-memory');
    expect(memory.length).toBeGreaterThan(0);
    expect(memory[0]!.message).toMatch(/^unmeasured: /);
  });

  it('topology=daemon is recognised as AlpaSim CLI-driven preset, not an unknown one', () => {
    const dir = workspace();
    expect(() => initExperiment(`sbatch ${SCRIPT} deploy=ord topology=daemon driver=vavam`, dir)).toThrow(
      /CLI-driven preset for daemon mode/,
    );
  });
});

interface CorpusCommand {
  source: string;
  command: string;
  topology: string;
}

describe('corpus of AlpaSim commands (README, TUTORIAL, AGENTS.md, CHANGELOG)', () => {
  const corpus = JSON.parse(
    readFileSync(join(REPO, 'test/fixtures/topology/alpasim-commands/commands.json'), 'utf8'),
  ) as { commands: CorpusCommand[] };

  it('holds at least 20 commands', () => {
    expect(corpus.commands.length).toBeGreaterThanOrEqual(20);
  });

  it.each(corpus.commands.map((c, i) => [c.source, c, i] as const))('%s', async (_s, c, i) => {
    const parsed = parseRunCommand(c.command);
    expect(parsed.topology).toBe(c.topology);
    const date = `202605${String(i + 1).padStart(2, '0')}`;
    const { w, report, rendered } = await initAndValidate(c.command, date);
    expect(report.files.flatMap((f) => f.errors)).toEqual([]);
    // Zero override keys outside AlpaSim's config tree reach sbatch: everything rendered is known (or a
    // plugin's name, which is only kept with a note).
    const argv = rendered.submission?.argv ?? [];
    expect(argv[0]).toBe('sbatch');
    const script = argv.findIndex((a) => a.endsWith('submit.sh'));
    for (const a of argv.slice(script + 1)) expect(overrideProblem(a)?.severity, a).not.toBe('error');
    for (const o of w.experiment.fixed_inputs.overrides ?? [])
      expect(overrideProblem(o)?.severity).not.toBe('error');
  });

  it('keeps LOGDIR, DESCRIPTION, --gpus and the quoted description of the issue-14 command', async () => {
    const c = corpus.commands.find((x) => x.source.startsWith('issue 14.3'))!;
    const { w, rendered } = await initAndValidate(c.command, '20260530');
    expect(w.experiment.fixed_inputs.submit_env).toEqual({
      LOGDIR: 'runs/topo',
      DESCRIPTION: '5Hz test run',
    });
    expect(w.experiment.fixed_inputs.overrides).toContain('wizard.description=5Hz test run');
    const s = rendered.submission!;
    expect(s.argv).toContain('--gpus=8');
    expect(s.env).toEqual({ LOGDIR: `runs/topo/${s.jobName}`, DESCRIPTION: '5Hz test run' });
  });

  it('understands cd <dir> && sbatch submit.sh (AlpaSim changelog form)', () => {
    const p = parseRunCommand(
      'cd src/tools/run-on-slurm && sbatch --account=a submit.sh deploy=ord topology=1gpu driver=vavam',
    );
    expect(p.cwd).toBe('src/tools/run-on-slurm');
    expect(p.submitScript).toBe('src/tools/run-on-slurm/submit.sh');
    expect(() => parseRunCommand('cd x && sbatch s.sh deploy=o topology=1gpu driver=v && rm -rf /')).toThrow(
      RunCommandError,
    );
  });
});

describe('override keys are checked against AlpaSim config tree', () => {
  it.each([
    [
      'runtime.endpoints.renderr.n_concurrent_rollouts=4',
      /did you mean `runtime\.endpoints\.renderer\.n_concurrent_rollouts`/,
    ],
    ['defines.nre_cache=5', /did you mean `defines\.nre_cache_size`/],
    ['trafficsim=catkk', /did you mean `catk`/],
    ['physics=disabled', /\+physics=disabled/],
  ])('%s is refused with a hint', (o, hint) => {
    const p = overrideProblem(o);
    expect(p?.severity).toBe('error');
    expect(p?.message).toMatch(hint);
  });

  it.each([
    'hydra.job.chdir=true',
    'hydra/launcher=basic',
    '+driver.model._target_=os.system',
    '+runtime._args_=[1]',
    '++hydra.job.env_set.LD_PRELOAD=/tmp/x.so',
    '+wizard.callbacks.x=y',
  ])('%s is forbidden', (o) => {
    expect(overrideProblem(o)?.rule).toBe('override-forbidden');
  });

  it.each([
    'wizard.description=5Hz test run',
    '++runtime.simulation_config.n_rollouts=2',
    '+runtime.endpoints.startup_timeout_s=600',
    '+physics=disabled',
    'trafficsim=catk',
    'runtime.simulation_config.cameras.0.frame_interval_us=33334',
    'services.renderer.environments=[OMP_NUM_THREADS=1]',
  ])('%s is accepted', (o) => {
    expect(overrideProblem(o)).toBeUndefined();
  });

  it('plugin names are warnings, not refusals', () => {
    expect(overrideProblem('trafficsim=internal')?.severity).toBe('warning');
    expect(overrideProblem('controller=ndas')?.severity).toBe('warning');
  });

  it('every override in the shipped example experiment exists in the catalogue', () => {
    const e = parse(
      readFileSync(join(REPO, 'topologies/topology-opt-vavam-ord-20261202/experiment.yaml'), 'utf8'),
    );
    for (const o of e.fixed_inputs.overrides ?? []) expect(overrideProblem(o), o).toBeUndefined();
  });
});

describe("the skill's own example topology (topology-knobs.md)", () => {
  const example = `name: skill-example
parent: baseline
hypothesis: The optimize-slurm-topology skill's example topology, pasted as AlpaSim writes it.
expected_effect: Same 64 rollouts in flight with the renderer's environment tuned.
topology:
  defines:
    nre_cache_size: 17 # renderer.n_concurrent_rollouts + 1
    physics_cache_size: 6
  eval:
    num_processes: 32
  services:
    renderer:
      environments:
        - HOME=/tmp
        - XDG_CACHE_HOME=/tmp/.cache
        - OMP_NUM_THREADS=1
        - PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.7
      replicas_per_container: 1
      gpus: [0, 1, 2, 3]
    driver:
      replicas_per_container: 8
      gpus: [4, 5, 6, 7]
    physics:
      replicas_per_container: 4
      gpus: [4, 5, 6, 7]
    controller:
      replicas_per_container: 16
      gpus: null
    trafficsim:
      replicas_per_container: 1
      gpus: [0, 1]
  runtime:
    nr_workers: 8
    endpoints:
      renderer:
        n_concurrent_rollouts: 16
      driver:
        n_concurrent_rollouts: 2
        skip: false
      physics:
        n_concurrent_rollouts: 4
        skip: false
      controller:
        n_concurrent_rollouts: 4
      trafficsim:
        skip: true
`;

  it('validates (services.renderer.environments accepted) and renders the environment as a quoted Hydra list', async () => {
    const dir = workspace();
    const w = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=8gpu_64rollouts driver=vavam`, dir, {
      date: '20260601',
      cluster: 'ord',
    });
    const file = join(w.experimentDir, 'skill-example.yaml');
    writeFileSync(file, example);
    const report = await validateFiles([file], { files: fileSystemSource('/') });
    expect(report.files[0]!.errors).toEqual([]);
    const out = await renderCandidateFile(file, { files: fileSystemSource('/') });
    expect(out.submission?.argv).toContain(
      "services.renderer.environments=['HOME=/tmp','XDG_CACHE_HOME=/tmp/.cache','OMP_NUM_THREADS=1','PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.7']",
    );
    expect(out.submission?.argv).toContain('services.trafficsim.gpus=[0,1]');
  });

  it('refuses environment names outside the tuning families (LD_PRELOAD, PATH)', async () => {
    const dir = workspace();
    const w = initExperiment(`sbatch ${SCRIPT} deploy=ord topology=8gpu_64rollouts driver=vavam`, dir, {
      date: '20260602',
      cluster: 'ord',
    });
    const file = join(w.experimentDir, 'env-bad.yaml');
    writeFileSync(
      file,
      'name: env-bad\nparent: baseline\nhypothesis: x\nexpected_effect: y\ntopology:\n  services:\n    renderer:\n      environments: [LD_PRELOAD=/tmp/x.so]\n',
    );
    const report = await validateFiles([file], { files: fileSystemSource('/') });
    expect(report.files[0]!.errors.map((e) => [e.rule, e.line])).toEqual([['bad-format', 8]]);
  });
});
