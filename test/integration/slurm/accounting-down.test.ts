// Issue 40 item 4 (medium): slurmdbd down stopped every command (any sacct failure failed the
// listing, though squeue alone knows every live job): `/topo cancel` failed and the job kept running.
// On a private cluster with accounting whose slurmdbd the test stops: a monitor pass, `/topo status`
// and `/topo cancel` still work (the listing falls back to the controller and says accounting is
// unreachable), and the cancelled job is gone. The monitor's pass exits 0 and its comment and check
// run say accounting is unreachable (the action's Slurm port dropped what sacct said, so neither did). (Without accounting there is no slurmdbd to lose:
// foreign-job.test.ts and the adapter tests run those listings.)
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useActionTestbed, workersCandidate } from '../../support/action-fixture.js';

const UNREACHABLE = 'Slurm accounting is unreachable';

const t = useActionTestbed({
  tag: 'dbd',
  cluster: 'private',
  accounting: true,
  pulls: { one: { title: 'one idea', files: { 'a.yaml': workersCandidate('a', 8) } } },
});

/** What sacct answers on the cluster (exit code and stderr). */
function sacct(env: { slurmConf: string }): { code: number | null; stderr: string } {
  const r = spawnSync('sacct', ['--noheader', '--parsable2', '--format=JobID'], {
    env: { ...process.env, SLURM_CONF: env.slurmConf },
    encoding: 'utf8',
  });
  return { code: r.status, stderr: r.stderr };
}

describe('slurmdbd down', () => {
  it('a pass, /topo status and /topo cancel work from the controller alone, and say accounting is unreachable', async () => {
    const env = t.privateCluster.env;
    const pull = t.pull('one');
    const submitted = await t.command(pull, '/topo submit a');
    expect(submitted.exitCode, submitted.stderr + submitted.stdout).toBe(0);
    const [job] = await t.live('a');
    expect(job).toBeDefined();
    const healthy = await t.monitor();
    expect(healthy.exitCode, healthy.stderr + healthy.stdout).toBe(0);
    expect(t.sticky(pull, 'monitor-a')).not.toContain(UNREACHABLE);

    const pid = Number(readFileSync(join(env.stateDir, 'run/slurmdbd.pid'), 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 50 && sacct(env).code === 0; i++) await new Promise((r) => setTimeout(r, 200));
    expect(sacct(env).stderr).toMatch(/Problem talking to the database|Connection refused/);

    const pass = await t.monitor();
    expect(pass.exitCode, pass.stderr + pass.stdout).toBe(0);
    expect(pass.stderr + pass.stdout).toMatch(/accounting unreachable/i);
    expect(pass.stdout).toMatch(/::warning::.*Slurm accounting unreachable/);
    const states = JSON.parse(pass.outputs.states ?? '{}') as Record<string, string>;
    expect(Object.values(states)).not.toContain('lost');
    expect(Object.values(states)).not.toContain('failed');
    // the candidate's comment and its pull request's check run say so (the same headline)
    expect(t.sticky(pull, 'monitor-a')).toMatch(new RegExp(`> ⚠️ ${UNREACHABLE} \\(.*database`));
    const check = t.gh.state.checkRuns
      .filter((c) => c.repo === t.repo && c.headSha === pull.head.sha && c.name === 'topo/monitor')
      .at(-1);
    expect(check?.output.summary).toContain(UNREACHABLE);

    const status = await t.command(pull, '/topo status');
    expect(status.exitCode, status.stderr + status.stdout).toBe(0);
    expect(['unavailable', 'failed']).not.toContain(status.outputs.outcome);

    const cancel = await t.command(pull, '/topo cancel a');
    expect(cancel.exitCode, cancel.stderr + cancel.stdout).toBe(0);
    expect(['unavailable', 'failed']).not.toContain(cancel.outputs.outcome);
    expect(cancel.reply).not.toMatch(/Problem talking to the database|Cluster unreachable/);
    expect(await t.live('a')).toEqual([]);
    expect(t.gh.violations()).toEqual([]);
  }, 600_000);
});
