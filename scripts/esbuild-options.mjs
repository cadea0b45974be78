// esbuild settings shared by the committed bundles (scripts/build.mjs) and the benchmarks
// (scripts/bench.mjs): one ESM bundle for the runtime floor (package.json engines, Node 20.19) and
// GitHub's node24 runtime of the actions.

// ESM bundles of CommonJS dependencies need `require`, `__filename` and `__dirname`.
const banner = [
  "import { createRequire as __topoCreateRequire } from 'node:module';",
  "import { fileURLToPath as __topoFileURLToPath } from 'node:url';",
  "import { dirname as __topoDirname } from 'node:path';",
  'const require = __topoCreateRequire(import.meta.url);',
  'const __filename = __topoFileURLToPath(import.meta.url);',
  'const __dirname = __topoDirname(__filename);',
].join('\n');

/** Options for bundling one Node entry point; `external` adds packages left out of the bundle. */
export function nodeBundleOptions(external = []) {
  return {
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    format: 'esm',
    banner: { js: banner },
    logLevel: 'warning',
    // Optional native speed-ups of ssh2; the pure-JS paths are used without them.
    external: ['cpu-features', './crypto/build/Release/sshcrypto.node', ...external],
    loader: { '.node': 'empty' },
  };
}
