// The bad-input corpus: every file must produce its rule at its line, and no file with an error
// may ever become an sbatch argv.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderCandidateFile, validateFiles } from '../../../src/usecases/validate.js';
import {
  CORPUS,
  CORPUS_EXPERIMENT,
  type CorpusCase,
  corpusManifest,
  corpusSource,
  generatedText,
  withRepoPresets,
} from './helpers.js';

const cases = corpusManifest();
const overlay = Object.fromEntries(
  cases.flatMap((c) => (generatedText(c) ? [[c.file, generatedText(c) as string]] : [])),
);
const files = corpusSource(overlay);
const options = { files, config: withRepoPresets(files), clustersFile: 'clusters.yaml' };

describe('bad-input corpus', () => {
  it('has at least 40 error cases, each an existing file with a rule and a line', () => {
    const errors = cases.filter((c) => c.severity === 'error');
    expect(errors.length).toBeGreaterThanOrEqual(40);
    for (const c of cases) {
      expect(c.rule, c.file).toMatch(/^[a-z-]+$/);
      expect(c.line, c.file).toBeGreaterThanOrEqual(1);
      if (!c.generate) expect(existsSync(join(CORPUS, c.file)), c.file).toBe(true);
    }
    expect(new Set(cases.map((c) => c.file)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.file, c] as [string, CorpusCase]))('%s', async (_name, c) => {
    const { files: reports } = await validateFiles([c.file], options);
    const report = reports[0]!;
    const found = [...report.errors, ...report.warnings];
    const hit = found.find((i) => i.rule === c.rule && i.line === c.line && i.severity === c.severity);
    expect(
      hit,
      `${c.file}: want ${c.severity} ${c.rule} at line ${c.line}; got ${found.map((i) => `${i.rule}@${i.line}`).join(', ')}`,
    ).toBeDefined();
    // Every finding names its file and a position inside it, and says something.
    for (const issue of found) {
      expect(issue.file).toBe(c.file);
      expect(issue.line).toBeGreaterThanOrEqual(1);
      expect(issue.column).toBeGreaterThanOrEqual(1);
      expect(issue.message.length).toBeGreaterThan(30);
    }
    if (c.severity === 'warning') expect(report.errors).toEqual([]);
  });

  it('no file with an error can produce an argv', async () => {
    const good = `${CORPUS_EXPERIMENT}/baseline.yaml`;
    // Sanity: the same pipeline does render a good candidate.
    expect((await renderCandidateFile(good, options)).submission?.argv[0]).toBe('sbatch');
    for (const c of cases.filter((x) => x.severity === 'error')) {
      if (c.file.startsWith('clusters/')) {
        // A bad clusters file stops every candidate that would run on it.
        const out = await renderCandidateFile(good, { ...options, clustersFile: c.file });
        expect(out.submission, c.file).toBeUndefined();
      } else if (c.companion) {
        // A bad experiment stops its (otherwise good) baseline.
        const out = await renderCandidateFile(c.companion, options);
        expect(out.submission, c.companion).toBeUndefined();
      } else {
        const out = await renderCandidateFile(c.file, options);
        expect(out.submission, c.file).toBeUndefined();
        expect(out.report.errors.length, c.file).toBeGreaterThan(0);
      }
    }
  });

  it('files with only warnings still render (a warning never blocks)', async () => {
    for (const c of cases.filter((x) => x.severity === 'warning')) {
      const out = await renderCandidateFile(c.file, options);
      expect(out.submission?.argv[0], c.file).toBe('sbatch');
    }
  });
});
