// `topo sim run <overrides…>`: one AlpaSim run played by the twin inside a Slurm job. Parses the overrides,
// fails at start-up like AlpaSim when a GPU runs out of memory, then serves the metrics over HTTP and publishes
// its targets for Prometheus file-based service discovery until the run ends (or scancel's SIGTERM).
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { METRIC_SERVICE_LABEL, TARGET_JOBS } from '../catalog/alpasim.js';
import { Simulation } from './engine.js';
import { createRegistries, type TwinRegistries } from './metrics.js';
import { OverrideError, parseOverrides, type TwinInvocation } from './overrides.js';
import { loadProfile, repoRoot } from './profile.js';

export interface RunIO {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
}

/** Scene counts when the profile does not list the suite. */
const DEFAULT_SCENES = 913;

export function oomLine(gpu: number, triedGb: number, usedGb: number, totalGb: number): string {
  const free = Math.max(0, totalGb - usedGb);
  return (
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${triedGb.toFixed(2)} GiB. ` +
    `GPU ${gpu} has a total capacity of ${totalGb.toFixed(2)} GiB of which ${free.toFixed(2)} GiB is free. ` +
    `Including non-PyTorch memory, this process has ${usedGb.toFixed(2)} GiB memory in use.`
  );
}

/**
 * Service logs as AlpaSim keeps them under the run directory's txt-logs/ (when the run dir is known). The local
 * cluster shares one run dir between runs, so each run gets txt-logs/<run name>_<slurm job id>/<service>.log,
 * beside its Slurm log slurm_output/<run name>_<slurm job id>.log.
 */
function serviceLogs(runDir: string | undefined, argv: string[], env: NodeJS.ProcessEnv) {
  const name =
    argv.find((a) => a.startsWith('wizard.run_name='))?.slice('wizard.run_name='.length) ??
    env.SLURM_JOB_NAME ??
    'run';
  const safe = `${name}_${env.SLURM_JOB_ID ?? process.pid}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  const dir = runDir ? join(runDir, 'txt-logs', safe) : undefined;
  if (dir) mkdirSync(dir, { recursive: true });
  return (service: string, line: string) => {
    if (dir) appendFileSync(join(dir, `${service}.log`), `${line}\n`);
  };
}

export async function runTwin(argv: string[], rawIo: RunIO): Promise<number> {
  const root = repoRoot();
  const log = serviceLogs(rawIo.env.TOPO_TWIN_RUN_DIR, argv, rawIo.env);
  const io = loggedIo(rawIo, log);
  const scale = Number(io.env.TOPO_TWIN_TIME_SCALE ?? '1');
  if (!Number.isFinite(scale) || scale <= 0) {
    io.err(`[twin] TOPO_TWIN_TIME_SCALE="${io.env.TOPO_TWIN_TIME_SCALE}": expected a positive number`);
    return 2;
  }
  const invocation = readInvocation(argv, root, io);
  if (typeof invocation === 'number') return invocation;
  const { profile, inv } = invocation;
  const runName = inv.runName ?? io.env.SLURM_JOB_NAME ?? 'alpasim-twin';
  const seed = io.env.TOPO_TWIN_SEED ? Number(io.env.TOPO_TWIN_SEED) : profile.seed;
  const scenes = profile.scenes?.[inv.testSuiteId ?? ''] ?? profile.scenes?.default ?? DEFAULT_SCENES;
  const sim = new Simulation(inv.topology, profile, {
    ...(seed !== undefined ? { seed } : {}),
    totalRollouts: scenes * inv.nRollouts,
  });
  announce(io, sim, inv, runName, scenes * inv.nRollouts, scale);
  const sleep = (simSeconds: number) => new Promise((r) => setTimeout(r, (simSeconds / scale) * 1000));
  const life = lifecycle(io);

  // Start-up: containers come up; the services allocate their GPU memory half-way through.
  const startup = profile.timeline.startup_s;
  io.out(
    `[twin] starting ${sim.net.layout.services.reduce((a, s) => a + s.containers, 0)} service containers…`,
  );
  await sleep(startup / 2);
  if (sim.steady.oom) return failAtStartup(io, log, sim);
  await sleep(startup / 2);

  const runUuid = randomUUID();
  const registries = createRegistries(sim.state, { hostname: hostname() });
  const t0 = Date.now();
  const refresh = () => registries.update(sim.advanceTo(((Date.now() - t0) / 1000) * scale));
  const ports = await serveAll(registries, refresh, life.servers);
  life.fileSd = publishTargets(io, ports, {
    run_uuid: runUuid,
    run_name: runName,
    user: io.env.USER ?? safeUser(),
    node: hostname(),
    slurm_job_id: io.env.SLURM_JOB_ID ?? '',
  });
  io.out(
    `[twin] run_uuid=${runUuid} runtime workers on ports ${ports.workers.join(',')}; dcgm ${ports.dcgm} process ${ports.process} node ${ports.node}`,
  );
  io.out(
    `[twin] expected steady state: ${sim.steady.secondsPerRollout.toFixed(3)} s/rollout, bottleneck ${sim.steady.bottleneck ? METRIC_SERVICE_LABEL[sim.steady.bottleneck] : '-'}`,
  );
  return playToTheEnd(io, sim, refresh, life, profile);
}

/** The run's output, also kept in the runtime's service log. */
function loggedIo(rawIo: RunIO, log: (service: string, line: string) => void): RunIO {
  return {
    env: rawIo.env,
    out: (l) => {
      rawIo.out(l);
      log('runtime', l);
    },
    err: (l) => {
      rawIo.err(l);
      log('runtime', l);
    },
  };
}

/** The profile and the parsed overrides, or the wizard's exit code when they are wrong. */
function readInvocation(
  argv: string[],
  root: string,
  io: RunIO,
): { profile: ReturnType<typeof loadProfile>; inv: TwinInvocation } | number {
  // deploy= picks the profile, which knows the node's GPU count: read it first.
  const deploy = argv.find((a) => a.startsWith('deploy='))?.slice('deploy='.length);
  try {
    if (!deploy)
      throw new OverrideError(
        'missing mandatory config group deploy=<name> (AlpaSim needs deploy=, topology= and driver=)',
      );
    const profile = loadProfile(deploy, root);
    return { profile, inv: parseOverrides(argv, { repoRoot: root, gpusPerNode: profile.gpu.count }) };
  } catch (e) {
    io.err(`Error in AlpaSim wizard configuration: ${(e as Error).message}`);
    return 1;
  }
}

function announce(
  io: RunIO,
  sim: Simulation,
  inv: TwinInvocation,
  runName: string,
  rollouts: number,
  scale: number,
): void {
  const l = sim.net.layout;
  io.out(
    `[twin] AlpaSim twin: run ${runName}, deploy=${inv.deploy} topology=${inv.preset} driver=${inv.driver}`,
  );
  io.out(`[twin] overrides: ${inv.overrides.join(' ')}`);
  io.out(
    `[twin] capacity: ${l.services.map((s) => `${s.service}=${s.capacity}`).join(' ')}; in flight ${l.inFlight}; ` +
      `runtime workers ${l.nrWorkers}; rollouts ${rollouts}; time scale ${scale}`,
  );
  io.out(
    `[twin] predicted GPU memory (GiB): ${l.gpus.map((g) => `${g.gpu}:${g.usedGb.toFixed(1)}/${g.totalGb}`).join(' ')}`,
  );
}

/** What the run holds open (its servers, its file-SD targets), released on its end or on scancel's signal. */
interface Lifecycle {
  servers: Server[];
  fileSd: string | undefined;
  stopping: boolean;
  cleanup(): void;
}

function lifecycle(io: RunIO): Lifecycle {
  const life: Lifecycle = {
    servers: [],
    fileSd: undefined,
    stopping: false,
    cleanup() {
      if (life.fileSd) rmSync(life.fileSd, { force: true });
      life.fileSd = undefined;
      for (const s of life.servers) s.close();
    },
  };
  const onSignal = (sig: NodeJS.Signals) => {
    io.err(`[twin] ${sig}: stopping, removing the file-SD targets`);
    life.stopping = true;
    life.cleanup();
    process.exit(sig === 'SIGTERM' ? 143 : 130);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return life;
}

/** A GPU ran out of memory as the services loaded their models: the owner's traceback, as AlpaSim fails. */
function failAtStartup(io: RunIO, log: (service: string, line: string) => void, sim: Simulation): number {
  const oom = sim.steady.oom!;
  const owner = sim.net.layout.gpus[oom.gpu]?.parts.at(-1)?.service ?? 'renderer';
  const trace = [
    'Traceback (most recent call last):',
    `  File "/app/${owner}/server.py", line 212, in load_model`,
    oomLine(oom.gpu, oom.triedGb, oom.usedGb, oom.totalGb),
  ];
  for (const l of trace) log(`${owner}-0`, l);
  io.err(`[${owner}] ${trace[0]}`);
  io.err(`[${owner}] ${trace[1]}`);
  io.err(trace[2]!);
  io.err(`[twin] service ${owner} failed at start-up; aborting the run`);
  return 1;
}

interface Ports {
  workers: number[];
  dcgm: number;
  process: number;
  node: number;
}

/** One HTTP /metrics server per registry, each refreshing the state before a scrape. */
async function serveAll(registries: TwinRegistries, refresh: () => void, servers: Server[]): Promise<Ports> {
  const serve = async (registry: Registry): Promise<number> => {
    const server = createServer((req, res) => {
      if (req.url !== '/metrics') {
        res.writeHead(404).end('not found\n');
        return;
      }
      refresh();
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (e: Error) => res.writeHead(500).end(`${e.message}\n`),
      );
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    return typeof addr === 'object' && addr ? addr.port : 0;
  };
  const workers: number[] = [];
  for (const r of registries.workers) workers.push(await serve(r));
  const [dcgm, process, node] = [
    await serve(registries.dcgm),
    await serve(registries.process),
    await serve(registries.node),
  ];
  return { workers, dcgm, process, node };
}

/** Writes the Prometheus file-SD targets (when TOPO_TWIN_FILE_SD_DIR is set); returns the file. */
function publishTargets(io: RunIO, ports: Ports, labels: Record<string, string>): string | undefined {
  const host = '127.0.0.1';
  const groups = [
    {
      targets: ports.workers.map((p) => `${host}:${p}`),
      labels: { ...labels, job: TARGET_JOBS.runtime, component: 'runtime' },
    },
    { targets: [`${host}:${ports.node}`], labels: { ...labels, job: TARGET_JOBS.node } },
    { targets: [`${host}:${ports.process}`], labels: { ...labels, job: TARGET_JOBS.process } },
    { targets: [`${host}:${ports.dcgm}`], labels: { ...labels, job: TARGET_JOBS.dcgm } },
  ];
  const sdDir = io.env.TOPO_TWIN_FILE_SD_DIR;
  if (!sdDir) {
    io.out('[twin] TOPO_TWIN_FILE_SD_DIR is not set: targets not published');
    return undefined;
  }
  mkdirSync(sdDir, { recursive: true });
  const file = join(sdDir, `${labels.run_uuid}.json`);
  writeFileSync(`${file}.tmp`, `${JSON.stringify(groups, null, 2)}\n`, { mode: 0o666 });
  renameSync(`${file}.tmp`, file);
  io.out(`[twin] published targets ${file}`);
  return file;
}

/** Plays the run in real time, reporting every 5 simulated minutes, until it ends or is stopped. */
async function playToTheEnd(
  io: RunIO,
  sim: Simulation,
  refresh: () => void,
  life: Lifecycle,
  profile: ReturnType<typeof loadProfile>,
): Promise<number> {
  let nextReport = 300;
  while (!life.stopping) {
    refresh();
    const st = sim.state;
    if (st.t >= nextReport || st.ended) {
      const n = st.workers.reduce((a, w) => a + w.completed + w.failed, 0);
      const el = Math.max(...st.workers.map((w) => w.elapsed));
      io.out(
        `[twin] ${(st.t / 60).toFixed(1)} min: ${n} rollouts, ${n ? (el / n).toFixed(3) : '-'} s/rollout`,
      );
      nextReport += 300;
    }
    if (st.ended) {
      // Leave the final values up for a couple of scrapes before the targets go away.
      await new Promise((r) => setTimeout(r, 2000));
      life.cleanup();
      return endOfRun(io, st.ended, profile);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return 143;
}

/** The run's last words and exit code, as AlpaSim ends: done, a crashed worker, or the host's OOM killer. */
function endOfRun(
  io: RunIO,
  ended: NonNullable<Simulation['state']['ended']>,
  profile: ReturnType<typeof loadProfile>,
): number {
  if (ended.reason === 'completed') {
    io.out('[twin] all rollouts done; run finished');
    return 0;
  }
  if (ended.reason === 'crash') {
    io.err('[runtime] Traceback (most recent call last):');
    io.err('[runtime]   File "/app/alpasim_runtime/worker/main.py", line 310, in job_consumer');
    io.err(
      `RuntimeError: runtime worker crashed after ${(ended.at / 60).toFixed(1)} minutes (twin fault profile)`,
    );
    return 1;
  }
  io.err(
    `Out of memory: Killed process ${process.pid} (python3) total-vm:0kB, anon-rss:${Math.round(profile.host.memory_gb)}GB (host out of memory)`,
  );
  return 137;
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknownUser';
  }
}
