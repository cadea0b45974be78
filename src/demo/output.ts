// The demo's output folder: every artifact is written through here so the summary can list them
// and index.html can link them.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export class DemoOutput {
  readonly dir: string;
  private files: string[] = [];

  constructor(dir: string) {
    this.dir = resolve(dir);
    mkdirSync(this.dir, { recursive: true });
  }

  /** Writes `text` at `path` (relative to the output folder); returns the absolute path. */
  write(path: string, text: string): string {
    const target = this.resolveInside(path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    this.remember(target);
    return target;
  }

  copy(from: string, path: string): string {
    const target = this.resolveInside(path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(from, target);
    this.remember(target);
    return target;
  }

  /** Reads back a file written earlier. */
  read(path: string): string {
    return readFileSync(this.resolveInside(path), 'utf8');
  }

  /** Files written so far, relative to the folder, in writing order. */
  written(): string[] {
    return [...this.files];
  }

  private remember(target: string): void {
    const rel = relative(this.dir, target);
    if (!this.files.includes(rel)) this.files.push(rel);
  }

  private resolveInside(path: string): string {
    const target = resolve(this.dir, path);
    const rel = relative(this.dir, target);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
      throw new Error(`demo output: ${path} would be written outside ${this.dir}`);
    }
    return target;
  }
}

/** The repository (or installed package) root: the nearest folder up with package.json and scripts/. */
export function findPackageRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'scripts'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the alpasim-topo folder above ${from}`);
    dir = parent;
  }
}

/**
 * mermaid.min.js as shipped beside the CLI bundle (dist/, copied by `npm run build`): the page must
 * not need a network, and the demo must run with `npm ci --omit=dev` (mermaid is a build tool here).
 */
export function mermaidScriptPath(root: string): string {
  const path = join(root, 'dist', 'mermaid.min.js');
  if (!existsSync(path)) {
    throw new Error(
      `${path} is missing: run \`npm run build\` in ${root} (index.html draws its charts with it)`,
    );
  }
  return path;
}
