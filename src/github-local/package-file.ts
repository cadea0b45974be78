// A data file of an installed package (GitHub's OpenAPI description, its GraphQL schema), found by
// walking up to node_modules from this module and, when bundled (the benchmarks run a bundle from
// a temporary folder, where import.meta.url points), from the repository root. Reading the file
// directly also avoids packages whose `exports` hide their data files.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageFile(pkg: string, rel: string): string {
  const starts = [dirname(fileURLToPath(import.meta.url)), process.env.TOPO_REPO_ROOT ?? process.cwd()];
  for (const start of starts) {
    for (let dir = resolve(start); ; dir = dirname(dir)) {
      const file = join(dir, 'node_modules', pkg, rel);
      if (existsSync(file)) return file;
      if (dirname(dir) === dir) break;
    }
  }
  throw new Error(`${pkg}/${rel} not found from ${starts.join(' or ')}: run npm ci`);
}
