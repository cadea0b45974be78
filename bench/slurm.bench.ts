// Latency of the Slurm adapter's calls on the local cluster, locally and through SSH, and the time of
// `scripts/local-cluster up` when already up. Prints figures; asserts nothing. Needs the cluster up.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSlurmClient } from '../src/slurm/client.js';
import { createLocalTransport } from '../src/slurm/local-transport.js';
import { createSshTransport } from '../src/slurm/ssh-transport.js';
import type { SlurmClient } from '../src/slurm/types.js';
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

const clients: Array<[string, SlurmClient]> = [
  ['local', createSlurmClient(createLocalTransport({ env: { SLURM_CONF: env.slurmConf } }))],
  [
    'ssh',
    createSlurmClient(
      createSshTransport({
        host: '127.0.0.1',
        port: env.sshPort,
        user: env.sshUser,
        knownHostKey: env.sshKnownHostKey,
        privateKey: readFileSync(env.sshKeyPath, 'utf8'),
      }),
    ),
  ],
];
const exp = `topology-opt-bench-${Date.now().toString(36)}-20260101`;
for (const [kind, slurm] of clients) {
  const c0 = process.hrtime.bigint();
  await slurm.jobs('topo-');
  console.log(`${kind}: first jobs() (connect + config probe + squeue): ${ms(c0).toFixed(1)} ms`);
  console.log(`${kind}: jobs(prefix), one squeue: ${await time(10, () => slurm.jobs('topo-'))}`);
  let i = 0;
  console.log(
    `${kind}: submitCandidate (list, mkdir, sbatch --hold, list, release): ${await time(5, () => {
      const name = `topo-${exp}-${kind}${i++}-0123abcd`;
      const argv = [
        'sbatch',
        '--parsable',
        `--job-name=${name}`,
        '--partition=debug',
        '--gpus-per-node=1',
        '--time=1',
        `--output=${env.runDir}/slurm_output/${name}_%j.log`,
        '--wrap=true',
      ];
      return submitCandidate(
        { slurm },
        {
          experimentId: exp,
          cluster: kind,
          submission: { jobName: name, argv, shellLine: '' },
          maxParallel: 100,
        },
      );
    })}`,
  );
  await slurm.close();
}
