// Two private local clusters beside the shared one, with no shared file: each one's daemons, config
// and twin live in its own state folder; /etc/slurm/slurm.conf is left to the default state; a twin
// job of each cluster publishes its targets into its own file-SD folder and only its own Prometheus
// sees the run.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, requireCluster } from '../../support/cluster.js';
import { type PrivateCluster, startPrivateCluster } from '../../support/private-cluster.js';

const shared = requireCluster();
const clusters: PrivateCluster[] = [];
let linkBefore = '';
// What /etc/slurm holds for the second cluster (see startPrivateCluster's etcSlurm): the link of a
// default cluster that is down (its state folder is there, its slurmctld is not running). A link
// the default state would take again is exactly the case where a private cluster must not take it.
const etcSlurm = mkdtempSync(join(tmpdir(), 'topo-etc-slurm-'));
const downDefaultConf = join(etcSlurm, 'default-state', 'slurm.conf');

function link(): string {
  try {
    return readlinkSync('/etc/slurm/slurm.conf');
  } catch {
    return existsSync('/etc/slurm/slurm.conf') ? '(a file)' : '(none)';
  }
}

/** Absolute paths a file names outside its comments, minus system ones (binaries, devices). */
// a base64 value (the SSH host key in clusters.yaml) holds '/' after a letter or '+': not a path
function pathsIn(text: string): string[] {
  const settings = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n');
  return [...settings.matchAll(/(?<![\w.:/+])\/(?:[\w.@%+-]+\/?)+/g)]
    .map((m) => m[0])
    .filter((p) => !/^\/(usr|bin|sbin|dev|proc|sys)(\/|$)/.test(p) && p !== '/');
}

async function prometheusSees(url: string, runName: string): Promise<boolean> {
  const q = encodeURIComponent(`count(alpasim_rollouts_total{run_name="${runName}"})`);
  const body = (await (await fetch(`${url}/api/v1/query?query=${q}`)).json()) as {
    data: { result: unknown[] };
  };
  return body.data.result.length > 0;
}

beforeAll(() => {
  linkBefore = link();
  mkdirSync(join(etcSlurm, 'default-state', 'run'), { recursive: true });
  writeFileSync(downDefaultConf, '# the default local cluster, down\n');
  writeFileSync(join(etcSlurm, 'default-state', 'twin.env'), '');
  symlinkSync(downDefaultConf, join(etcSlurm, 'slurm.conf'));
  clusters.push(startPrivateCluster({ slot: 1 }), startPrivateCluster({ slot: 2, etcSlurm }));
});

afterAll(() => {
  for (const c of clusters) c.stop();
  rmSync(etcSlurm, { recursive: true, force: true });
});

describe('a private cluster is private', () => {
  it('leaves /etc/slurm/slurm.conf to the default state', () => {
    expect(link()).toBe(linkBefore);
    for (const c of clusters) expect(linkBefore).not.toContain(c.env.stateDir);
  });

  it('leaves /etc/slurm/slurm.conf alone while the default cluster is down, too', () => {
    // The second cluster came up with a free link (the default cluster's, not running): only the
    // default state may take it, so it still names the default state's slurm.conf.
    expect(readlinkSync(join(etcSlurm, 'slurm.conf'))).toBe(downDefaultConf);
  });

  it('names no file outside its own state in its configuration, and its daemons open none', () => {
    const states = [shared.stateDir, ...clusters.map((c) => c.env.stateDir)];
    for (const c of clusters) {
      const state = c.env.stateDir;
      for (const file of [
        'slurm.conf',
        'gres.conf',
        'twin.env',
        'clusters.yaml',
        'ssh/sshd_config',
        'ssh/ssh_config',
        'prometheus/prometheus.yml',
      ]) {
        const outside = pathsIn(readFileSync(join(state, file), 'utf8')).filter(
          (p) => !p.startsWith(`${state}/`) && p !== state,
        );
        // clusters.yaml names the twin's code (the checkout, read-only), nothing of another cluster.
        const allowed = file === 'clusters.yaml' ? outside.filter((p) => p !== repoRoot) : outside;
        expect(allowed, `${state}/${file}`).toEqual([]);
      }
      for (const pidFile of readdirSync(join(state, 'run')).filter((f) => f.endsWith('.pid'))) {
        const pid = readFileSync(join(state, 'run', pidFile), 'utf8').replace(/\D.*$/s, '');
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        for (const other of states.filter((s) => s !== state)) expect(cmdline).not.toContain(other);
        const open = readdirSync(`/proc/${pid}/fd`)
          .map((fd) => {
            try {
              return readlinkSync(`/proc/${pid}/fd/${fd}`);
            } catch {
              return '';
            }
          })
          .filter((p) => p.startsWith('/') && !/^\/(dev|proc|sys)\//.test(p));
        expect(
          open.filter((p) => !p.startsWith(`${state}/`)),
          `${pidFile}: ${cmdline}`,
        ).toEqual([]);
      }
    }
  });

  it("runs each cluster's twin into its own file-SD folder and Prometheus", async () => {
    const runs = clusters.map((c, i) => {
      const runName = `private-twin-${i + 1}-${Date.now()}`;
      const id = execFileSync(
        'sbatch',
        [
          '--parsable',
          '--partition=debug',
          '--export=PATH,HOME,USER,LANG',
          `--output=${c.env.runDir}/slurm_output/%j.out`,
          join(repoRoot, 'scripts/alpasim-twin/submit.sh'),
          'deploy=twin-balanced',
          'topology=1gpu',
          'driver=vavam',
          `wizard.run_name=${runName}`,
        ],
        { env: { ...process.env, SLURM_CONF: c.env.slurmConf }, encoding: 'utf8' },
      ).trim();
      return { c, runName, id };
    });
    try {
      for (const { c, runName } of runs) {
        let seen = false;
        for (let i = 0; i < 120 && !seen; i++) {
          seen = await prometheusSees(c.env.prometheusUrl, runName);
          if (!seen) await new Promise((r) => setTimeout(r, 500));
        }
        expect(seen, `${runName} in ${c.env.prometheusUrl}`).toBe(true);
        expect(readdirSync(c.env.fileSdDir).length).toBeGreaterThan(0);
      }
      // Neither run reached the other cluster's Prometheus, nor the shared one's.
      for (const { runName } of runs)
        for (const url of [shared.prometheusUrl, ...runs.map((r) => r.c.env.prometheusUrl)].filter(
          (u) => !runs.some((r) => r.runName === runName && r.c.env.prometheusUrl === u),
        ))
          expect(await prometheusSees(url, runName), `${runName} in ${url}`).toBe(false);
    } finally {
      for (const { c, id } of runs)
        execFileSync('scancel', [id], { env: { ...process.env, SLURM_CONF: c.env.slurmConf } });
    }
  });
});
