import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDemoArgs } from '../../../src/cli/commands/demo.js';
import { UsageError } from '../../../src/cli/errors.js';
import { Cleanup, signalExitCode } from '../../../src/demo/cleanup.js';
import { parseClusterEnv } from '../../../src/demo/cluster.js';
import { DemoOutput } from '../../../src/demo/output.js';
import { CHROMIUM_PATH, chromiumNote, DemoAborted, interruptedExit } from '../../../src/demo/run.js';
import { dateStamp, SAMPLE_COMMAND } from '../../../src/demo/sample.js';

describe('parseDemoArgs', () => {
  it('defaults to the full demo into ./demo-out from the sample command', () => {
    expect(parseDemoArgs([])).toEqual({
      quick: false,
      autopilot: false,
      json: false,
      out: 'demo-out',
      command: SAMPLE_COMMAND,
    });
  });
  it('reads --quick, --out and --command in both spellings', () => {
    expect(parseDemoArgs(['--quick', '--out', '/tmp/x', '--command=sbatch a.sh deploy=d'])).toEqual({
      quick: true,
      autopilot: false,
      json: false,
      out: '/tmp/x',
      command: 'sbatch a.sh deploy=d',
    });
  });
  it('reads --autopilot (-a)', () => {
    expect(parseDemoArgs(['--autopilot', '--quick'])).toMatchObject({ autopilot: true, quick: true });
    expect(parseDemoArgs(['-a'])).toMatchObject({ autopilot: true, quick: false });
  });
  it('refuses unknown options and missing values', () => {
    expect(() => parseDemoArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseDemoArgs(['--out'])).toThrow('--out needs a value');
    expect(() => parseDemoArgs(['--out', '--quick'])).toThrow('--out needs a value');
  });
});

describe('parseClusterEnv', () => {
  it('reads the env object and names a missing key', () => {
    const env = {
      stateDir: '/s',
      clustersFile: '/s/c.yaml',
      fileSdDir: '/s/f',
      prometheusUrl: 'http://127.0.0.1:9093',
      runDir: '/s/r',
      timeScale: 60,
      up: true,
    };
    expect(parseClusterEnv(JSON.stringify(env)).up).toBe(true);
    expect(() => parseClusterEnv(JSON.stringify({ ...env, prometheusUrl: undefined }))).toThrow(
      '"prometheusUrl" is missing',
    );
  });
});

describe('Cleanup', () => {
  it('runs steps newest first, once, and keeps going after a failing step', async () => {
    const cleanup = new Cleanup();
    const ran: string[] = [];
    cleanup.add('stop cluster', () => {
      ran.push('cluster');
    });
    const remove = cleanup.add('cancel job 1', () => {
      ran.push('job 1');
    });
    cleanup.add('cancel job 2', () => {
      throw new Error('scancel failed');
    });
    remove();
    expect(cleanup.pending()).toEqual(['cancel job 2', 'stop cluster']);
    const log: string[] = [];
    await Promise.all([cleanup.runAll((l) => log.push(l)), cleanup.runAll((l) => log.push(l))]);
    expect(ran).toEqual(['cluster']);
    expect(log).toEqual([
      'cleanup: cancel job 2',
      'cleanup: cancel job 2 failed: scancel failed',
      'cleanup: stop cluster',
    ]);
    expect(cleanup.pending()).toEqual([]);
  });
  it('maps signals to exit codes', () => {
    expect(signalExitCode('SIGINT')).toBe(130);
    expect(signalExitCode('SIGTERM')).toBe(143);
  });
  it("ends both demos on an interruption the same way: said once, the signal's exit code; else thrown on", () => {
    const lines: string[] = [];
    const live = new AbortController();
    expect(interruptedExit(new DemoAborted('SIGTERM'), live.signal, (l) => lines.push(l))).toBe(143);
    const failed = new Error('squeue: interrupted');
    expect(() => interruptedExit(failed, live.signal, (l) => lines.push(l))).toThrow(failed);
    const ctrlC = new AbortController();
    ctrlC.abort('SIGINT');
    // a Slurm command the Ctrl-C reached fails too: the interruption, not its failure
    expect(interruptedExit(failed, ctrlC.signal, (l) => lines.push(l))).toBe(130);
    expect(lines).toEqual([
      'demo interrupted by SIGTERM: stopping what it started',
      'demo interrupted by SIGINT: stopping what it started',
    ]);
  });
});

describe('dateStamp', () => {
  it('is the UTC day as yyyymmdd', () => {
    expect(dateStamp(new Date('2026-12-02T23:59:59Z'))).toBe('20261202');
  });
});

describe('DemoOutput', () => {
  it('writes inside its folder, lists what it wrote, and refuses paths that leave it', () => {
    const out = new DemoOutput(mkdtempSync(join(tmpdir(), 'demo-output-')));
    out.write('comments/a.md', 'x');
    out.write('comments/a.md', 'y');
    expect(out.read('comments/a.md')).toBe('y');
    expect(out.written()).toEqual(['comments/a.md']);
    expect(() => out.write('../escape.md', 'x')).toThrow('outside');
    expect(() => out.write('/etc/passwd', 'x')).toThrow('outside');
  });
});

describe('chromiumNote', () => {
  it("says, when Chromium is missing, that the page's check needs it and how to install it (issue 41)", () => {
    const note = chromiumNote(() => false);
    expect(note).toContain(`Chromium is not installed (${CHROMIUM_PATH})`);
    expect(note).toContain('npm ci does not install it');
    expect(note).toMatch(/\n {2}sudo apt-get update && sudo apt-get install -y chromium$/);
    expect(chromiumNote((path) => path === CHROMIUM_PATH)).toBeNull();
  });
});
