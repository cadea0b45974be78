// Test support for the topology tests: file sources over the fixture corpus, with the repository's
// presets standing in for `<topologies>/presets` (the corpus does not copy them).
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileSystemSource } from '../../../src/cli/commands/validate.js';
import type { FileSource } from '../../../src/usecases/validate.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CORPUS = join(REPO, 'test/fixtures/topology/corpus');
export const CORPUS_EXPERIMENT = 'topology-opt-vavam-test-20260101';

export interface CorpusCase {
  file: string;
  rule: string;
  severity: 'error' | 'warning';
  line: number;
  why: string;
  companion?: string;
  generate?: { repeatComment: number };
}

export function corpusManifest(): CorpusCase[] {
  return JSON.parse(readFileSync(join(CORPUS, 'manifest.json'), 'utf8')) as CorpusCase[];
}

/** Text of a generated case (kept out of the repository because of its size). */
export function generatedText(c: CorpusCase): string | undefined {
  if (!c.generate) return undefined;
  const line = '# padding line of a generated oversized file ......................................\n';
  return `name: too-large\ntopology: {}\n${line.repeat(Math.ceil(c.generate.repeatComment / line.length))}`;
}

/** The corpus folder as a FileSource (paths relative to it), plus in-memory overlay files. */
export function corpusSource(overlay: Record<string, string> = {}): FileSource {
  const fs = fileSystemSource(CORPUS);
  return {
    async read(path) {
      if (path in overlay) return overlay[path];
      return fs.read(path);
    },
    async list(dir) {
      const names = (await fs.list(dir)) ?? [];
      const extra = Object.keys(overlay)
        .filter((p) => dirname(p) === dir)
        .map((p) => p.slice(dir.length + 1));
      return [...new Set([...names, ...extra])].sort();
    },
  };
}

/** Trusted configuration: presets come from the repository, everything else from `base`. */
export function withRepoPresets(base: FileSource): FileSource {
  const presets = fileSystemSource(join(REPO, 'topologies'));
  return {
    async read(path) {
      const m = /(^|\/)presets\/([^/]+)$/.exec(path);
      return m ? presets.read(`presets/${m[2]}`) : base.read(path);
    },
    list: (dir) => base.list(dir),
  };
}
