// A symlinked candidate (or one under a symlinked folder) is refused through the CLI's filesystem
// source without its target being opened: the error names the link, never the target's content.
import { cpSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CliIO } from '../../../src/cli/command.js';
import { main } from '../../../src/cli/main.js';
import { fileSystemSource, UnsafeFileError, validateFiles } from '../../../src/usecases/validate.js';
import { REPO } from './helpers.js';

const EXP = 'topology-opt-vavam-ord-20261202';
const SECRET = 'SECRET-FIRST-LINE: do-not-quote-me';

function repoWithLinks() {
  const root = mkdtempSync(join(tmpdir(), 'topo-symlink-'));
  cpSync(join(REPO, 'topologies'), join(root, 'topologies'), { recursive: true });
  const outside = mkdtempSync(join(tmpdir(), 'topo-symlink-target-'));
  writeFileSync(join(outside, 'secret.yaml'), `${SECRET}\nname: evil\n`);
  symlinkSync(join(outside, 'secret.yaml'), join(root, 'topologies', EXP, 'evil.yaml'));
  // A folder link: the experiment's candidates seen through another name.
  symlinkSync(join(root, 'topologies', EXP), join(root, 'topologies', 'topology-opt-vavam-lnk-20261202'));
  return root;
}

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const handle: CliIO = {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    cwd,
    env: {},
    isTTY: false,
  };
  return { handle, text: () => out.join('') + err.join('') };
}

describe('symlinked topology files', () => {
  const root = repoWithLinks();

  it('the filesystem source refuses a link without reading its target', async () => {
    const source = fileSystemSource(root);
    await expect(source.read(`topologies/${EXP}/evil.yaml`)).rejects.toThrow(UnsafeFileError);
    await expect(source.read('topologies/topology-opt-vavam-lnk-20261202/baseline.yaml')).rejects.toThrow(
      /under a symbolic link \(topologies\/topology-opt-vavam-lnk-20261202\)/,
    );
    // Regular files still read.
    expect(await source.read(`topologies/${EXP}/baseline.yaml`)).toContain('name: baseline');
  });

  it('validation reports the link at the file, and no sibling listing includes it', async () => {
    const source = fileSystemSource(root);
    const report = await validateFiles([`topologies/${EXP}/evil.yaml`, `topologies/${EXP}/baseline.yaml`], {
      files: source,
    });
    const [evil, baseline] = report.files;
    expect(evil?.errors).toHaveLength(1);
    expect(evil?.errors[0]).toMatchObject({ rule: 'unsafe-file', line: 1, column: 1 });
    expect(evil?.errors[0]?.message).toContain('is a symbolic link');
    expect(JSON.stringify(report)).not.toContain('SECRET');
    expect(baseline?.errors).toEqual([]);
    expect(await source.list(`topologies/${EXP}`)).not.toContain('evil.yaml');
  });

  it('topo validate and topo submit refuse it and never quote the target', async () => {
    for (const args of [
      ['validate', `topologies/${EXP}/evil.yaml`],
      ['submit', '--dry-run', `topologies/${EXP}/evil.yaml`],
      ['submit', '--dry-run', 'topologies/topology-opt-vavam-lnk-20261202/baseline.yaml'],
    ]) {
      const t = io(root);
      expect(await main(args, t.handle), args.join(' ')).toBe(1);
      expect(t.text()).toMatch(/symbolic link/);
      expect(t.text()).not.toContain('SECRET');
      expect(t.text()).not.toContain('do-not-quote-me');
    }
  });
});
