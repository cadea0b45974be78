// Honest dependencies: `dependencies` are exactly the packages whose code the bundles carry (the
// runtime), no devDependency is bundled, no bundled package needs a newer Node than `engines` says,
// and nothing reads node_modules at run time, so `npm ci --omit=dev && npx topo demo` works.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module without types
import { nodeBundleOptions } from '../../../scripts/esbuild-options.mjs';
import { repoRoot } from '../../support/run-action.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
const entries = [
  'src/cli/main.ts',
  ...readdirSync(join(repoRoot, 'actions'))
    .filter((n) => existsSync(join(repoRoot, 'actions', n, 'main.ts')))
    .map((n) => `actions/${n}/main.ts`),
];

/** The package a bundled file belongs to (the innermost node_modules/<name>). */
function packageOf(path: string): string | undefined {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(path);
  return m?.[1];
}
function packageDir(path: string): string {
  const i = path.lastIndexOf('node_modules/');
  const name = packageOf(path) as string;
  return join(repoRoot, path.slice(0, i + 'node_modules/'.length + name.length));
}

/** Lowest version a Node engines range admits (">=22.12.0" → 22.12.0, "^20.19.0 || >=22.12.0" → 20.19.0). */
function lowestNode(range: string): [number, number] {
  const lows = range.split('||').map((part) => {
    const m = /(\d+)(?:\.(\d+|x))?/.exec(part.replace(/^[^\d]*/, ''));
    return [Number(m?.[1] ?? 0), Number(m?.[2] === 'x' ? 0 : (m?.[2] ?? 0))] as [number, number];
  });
  return lows.sort((a, b) => a[0] - b[0] || a[1] - b[1])[0] as [number, number];
}
const atLeast = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

let inputs: string[] = [];
let externals: string[] = [];
beforeAll(async () => {
  const metas: Metafile[] = [];
  for (const entry of entries) {
    const result = await build({
      ...nodeBundleOptions(),
      entryPoints: [join(repoRoot, entry)],
      write: false,
      outfile: join(repoRoot, 'tmp-bundle.js'),
      metafile: true,
      absWorkingDir: repoRoot,
    });
    if (result.metafile) metas.push(result.metafile);
  }
  inputs = metas.flatMap((m) => Object.keys(m.inputs));
  externals = metas.flatMap((m) =>
    Object.values(m.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)),
  );
}, 120_000);

describe('dependencies', () => {
  it('runtime dependencies are exactly the packages the bundles carry; no devDependency is bundled', () => {
    const direct = new Set([...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]);
    const bundled = new Set(inputs.map(packageOf).filter((p): p is string => !!p && direct.has(p)));
    // Packages a bundle carries only through another dependency are not listed, but reported here.
    expect([...bundled].sort()).toEqual(
      Object.keys(pkg.dependencies)
        .filter((d) => bundled.has(d))
        .sort(),
    );
    for (const dev of Object.keys(pkg.devDependencies)) expect(bundled.has(dev), dev).toBe(false);
    const unused = Object.keys(pkg.dependencies).filter((d) => !bundled.has(d));
    // The octokit plugins are wired into src/github/client.ts this round; everything else must be used.
    expect(unused.filter((d) => !d.startsWith('@octokit/plugin-'))).toEqual([]);
  });

  it('no bundled package needs a newer Node than engines', () => {
    const claimed = lowestNode(pkg.engines.node);
    expect(claimed).toEqual([20, 19]);
    const needy: string[] = [];
    for (const dir of new Set(inputs.filter((p) => packageOf(p)).map(packageDir))) {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const range = manifest.engines?.node as string | undefined;
      if (range && !atLeast(claimed, lowestNode(range)))
        needy.push(`${manifest.name}@${manifest.version} (${range})`);
    }
    expect(needy).toEqual([]);
  });

  it('the bundles import only Node built-ins and the optional native helpers of ssh2', () => {
    const allowed = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
    const other = [...new Set(externals)].filter(
      (e) => !allowed.has(e) && !allowed.has(e.replace(/^node:/, '').split('/')[0] as string),
    );
    expect(other.sort()).toEqual(['./crypto/build/Release/sshcrypto.node', 'cpu-features']);
  });

  it('nothing in src/ reads node_modules at run time', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
        const rel = `${dir}/${e.name}`;
        if (e.isDirectory()) walk(rel);
        else if (
          /\.ts$/.test(e.name) &&
          /['"`]node_modules['"`/]/.test(readFileSync(join(repoRoot, rel), 'utf8'))
        )
          offenders.push(rel);
      }
    };
    walk('src');
    // validate.ts only skips a folder of that name when expanding paths; the local GitHub API (the
    // tests' and `topo demo --autopilot`'s, bundled apart in dist/github-local.js, never in the CLI
    // bundle) reads GitHub's OpenAPI description and GraphQL schema from the development dependencies.
    expect(offenders).toEqual(['src/cli/commands/validate.ts', 'src/github-local/package-file.ts']);
  });

  it('lowestNode reads the engines ranges npm packages use', () => {
    expect(lowestNode('>=22.12.0')).toEqual([22, 12]);
    expect(lowestNode('^20.19.0 || >=22.12.0')).toEqual([20, 19]);
    expect(lowestNode('>= 0.6')).toEqual([0, 6]);
    expect(lowestNode('>=18')).toEqual([18, 0]);
  });
});
