// Latency of the Slurm adapter's calls on the local cluster, locally and through SSH, and the time of
// `scripts/local-cluster up` when already up. Prints figures; asserts nothing. Needs the cluster up.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSlurmClient } from '../src/slurm/client.js';
import { createLocalTransport } from '../src/slurm/local-transport.js';
import { createSshTransport } from '../src/slurm/ssh-transport.js';
import type { SlurmClient, Transport } from '../src/slurm/types.js';
import { submitCandidate } from '../src/usecases/submit.js';

const root = process.env.TOPO_REPO_ROOT ?? process.cwd();
const script = join(root, 'scripts/local-cluster');
const env = JSON.parse(execFileSync('bash', [script, 'env', '--json'], { encoding: 'utf8' }));
if (!env.up) throw new Error('local cluster is not up: run `bash scripts/local-cluster up`');

function ms(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
async function time(n: number, f: () => Promise<unknown>): Promise<string> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await f();
    xs.push(ms(t0));
  }
  xs.sort((a, b) => a - b);
  return `median ${xs[Math.floor(xs.length / 2)]?.toFixed(1)} ms, min ${xs[0]?.toFixed(1)}, max ${xs.at(-1)?.toFixed(1)} (n=${n})`;
}

const t0 = process.hrtime.bigint();
execFileSync('bash', [script, 'up'], { stdio: 'ignore' });
console.log(`local-cluster up (already up): ${ms(t0).toFixed(0)} ms`);

const sshTransport = (persistentShell: boolean) =>
  createSshTransport({
    host: '127.0.0.1',
    port: env.sshPort,
    user: env.sshUser,
    knownHostKey: env.sshKnownHostKey,
    privateKey: readFileSync(env.sshKeyPath, 'utf8'),
    persistentShell,
  });
const transports: Array<[string, () => Transport]> = [
  ['local', () => createLocalTransport({ env: { SLURM_CONF: env.slurmConf } })],
  ['ssh', () => sshTransport(true)],
  ['ssh, one exec per command', () => sshTransport(false)],
];
const exp = `topology-opt-bench-${Date.now().toString(36)}-20260101`;
let serial = 0;
const argvOf = (name: string) => [
  'sbatch',
  '--parsable',
  `--job-name=${name}`,
  '--partition=debug',
  '--gpus-per-node=1',
  '--time=1',
  `--output=${env.runDir}/slurm_output/${name}_%j.log`,
  '--wrap=true',
];
console.log(`accounting: ${env.accounting ?? 'unknown'} (TOPO_CLUSTER_ACCOUNTING=on for sacct)`);
for (const [kind, make] of transports) {
  const slurm = createSlurmClient(make());
  const c0 = process.hrtime.bigint();
  await slurm.jobs('topo-');
  console.log(`${kind}: first jobs() (connect + config probe + listing): ${ms(c0).toFixed(1)} ms`);
  console.log(`${kind}: jobs(prefix), one listing: ${await time(5, () => slurm.jobs('topo-'))}`);
  await slurm.close();
  // What `topo submit` pays: a fresh connection each time. sbatch's own time is one sbatch on a fresh
  // connection; submitCandidate adds the listing before, the mkdir, the listing after and the release.
  const fresh = async (f: (client: SlurmClient) => Promise<unknown>) => {
    const client = createSlurmClient(make());
    try {
      await f(client);
    } finally {
      await client.close();
    }
  };
  console.log(
    `${kind}: sbatch alone, fresh connection: ${await time(3, () =>
      fresh(async (c) => c.cancel(await c.submit(argvOf(`topo-${exp}-alone${serial++}-0123abcd`)))),
    )}`,
  );
  console.log(
    `${kind}: submitCandidate, fresh connection (list, mkdir, sbatch --hold, list, release): ${await time(
      3,
      () =>
        fresh((c) => {
          const name = `topo-${exp}-c${serial++}-0123abcd`;
          return submitCandidate(
            { slurm: c },
            {
              experimentId: exp,
              cluster: kind,
              submission: { jobName: name, argv: argvOf(name), shellLine: '' },
              maxParallel: 100,
            },
          );
        }),
    )}`,
  );
}
