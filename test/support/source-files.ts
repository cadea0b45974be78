// The TypeScript files under a folder (bundles and dependencies left out): what the structure checks read.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'dist' || e.name === 'node_modules'
        ? []
        : tsFiles(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}
