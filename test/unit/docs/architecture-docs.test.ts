// The architecture as written agrees with the code: every Mermaid diagram of the README and docs/
// parses with Mermaid's own parser (as GitHub would draw it), the README's pass diagram names every
// stage of STAGES in order, and every folder of src/ opens with a one-line README saying what it owns.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STAGES } from '../../../src/monitor/pass.js';
import { repoRoot } from '../../support/cluster.js';
import { mermaidBlocks, mermaidParse } from '../report/mermaid-parser.js';

const markdownFiles = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('the architecture as written', () => {
  it('every Mermaid diagram of the README and docs/ parses', async () => {
    const blocks = markdownFiles.flatMap((file) =>
      mermaidBlocks(readFileSync(join(repoRoot, file), 'utf8')).map((text) => ({ file, text })),
    );
    expect(blocks.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    for (const { file, text } of blocks)
      await expect(mermaidParse(text), `${file}:\n${text}`).resolves.toBeTruthy();
  });

  it("the README's pass diagram names every stage in STAGES' order", () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const pass = mermaidBlocks(readme).find((b) => b.includes('monitorPass'));
    const chain = pass?.split('\n').find((l) => /^\s*read -->/.test(l)) ?? '';
    const named = chain.split('-->').map((s) => s.trim().split(/[\s[]/)[0]);
    expect(named.filter((n) => STAGES.some((s) => s.name === n))).toEqual(STAGES.map((s) => s.name));
  });

  it('every folder of src/ opens with a one-line README saying what it owns', () => {
    const folders = readdirSync(join(repoRoot, 'src'), { withFileTypes: true }).filter((d) =>
      d.isDirectory(),
    );
    expect(folders.length).toBeGreaterThan(15);
    for (const { name } of folders) {
      const file = join(repoRoot, 'src', name, 'README.md');
      expect(existsSync(file), `src/${name}/README.md`).toBe(true);
      expect(readFileSync(file, 'utf8').split('\n')[0]).toMatch(new RegExp(`^# src/${name}: \\S.{20,}$`));
    }
  });
});
