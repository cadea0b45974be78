// The architecture as written agrees with the code: every Mermaid diagram of the README and docs/
// parses with Mermaid's own parser (as GitHub would draw it), the README's pass diagram names every
// stage of STAGES in order, and every folder of src/ opens with a one-line README saying what it owns.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/commands/registry.js';
import { STAGES, withStage } from '../../../src/monitor/pass.js';
import { repoRoot } from '../../support/cluster.js';
import { TIERS } from '../../support/tiers.js';
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

// docs/architecture.md, read as claims about the code (issue 39 item 7): each check reads the claim
// from the page (its paths, names, lists) and fails once the code no longer says it.
const ARCHITECTURE = readFileSync(join(repoRoot, 'docs/architecture.md'), 'utf8');

/** The paragraph of the page that opens with `start`. */
function claim(start: string): string {
  const at = ARCHITECTURE.indexOf(start);
  expect(at, `docs/architecture.md says "${start}"`).toBeGreaterThanOrEqual(0);
  return ARCHITECTURE.slice(at).split('\n\n')[0] as string;
}

/** The code block that follows `heading`'s paragraph lines. */
function blockAfter(heading: string): string[] {
  const rest = ARCHITECTURE.slice(ARCHITECTURE.indexOf(heading));
  return (/\n```\n([\s\S]*?)\n```/.exec(rest)?.[1] ?? '').split('\n');
}

const ticked = (text: string) => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
const srcFolders = (text: string) => ticked(text).filter((t) => /^src\/[a-z-]+$/.test(t));

function filesUnder(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'dist'
        ? []
        : filesUnder(`${dir}/${e.name}`)
      : e.name.endsWith('.ts')
        ? [`${dir}/${e.name}`]
        : [],
  );
}
const source = (file: string) => readFileSync(join(repoRoot, file), 'utf8');
const importsOf = (file: string) =>
  [...source(file).matchAll(/^(?:(?:import|export)[^;]*? from |import )'([^']+)';/gms)].map(
    (m) => m[1] as string,
  );
const IO_MODULES = /^(node:)?(fs|fs\/promises|child_process|net|http|https|http2|dgram|worker_threads)$/;
const doesIO = (file: string) =>
  importsOf(file).some((i) => IO_MODULES.test(i)) || /\bfetch\(/.test(source(file));

describe('docs/architecture.md says what the code does', () => {
  it('every path it names exists', () => {
    const paths = [...ARCHITECTURE.matchAll(/\b(?:src|actions|test|dist|schemas|bench)\/[\w./-]*[\w/]/g)]
      .map((m) => m[0])
      .filter((p, i, all) => all.indexOf(p) === i);
    expect(paths.length).toBeGreaterThan(40);
    expect(paths.filter((p) => !existsSync(join(repoRoot, p)))).toEqual([]);
  });

  it('every name of code it writes is exported from src/', () => {
    const code = [...filesUnder('src')].map(source).join('\n');
    const names = ticked(ARCHITECTURE)
      .map((t) => /^([A-Za-z]\w*)(?:\(.*\))?$/.exec(t)?.[1] ?? '')
      .filter((n) => /^[a-z]+[A-Z]\w*$|^[A-Z][a-z\d]+[A-Z]\w*$|^[A-Z]{4,}$/.test(n))
      .filter((n, i, all) => all.indexOf(n) === i);
    expect(names.length).toBeGreaterThan(15);
    const exported = (n: string) =>
      new RegExp(`export (?:async )?(?:function|const|let|interface|type|class|enum) ${n}\\b`).test(code) ||
      new RegExp(`export (?:type )?\\{[^}]*\\b${n}\\b[^}]*\\}`).test(code);
    expect(names.filter((n) => !exported(n))).toEqual([]);
  });

  it("its import tiers are the structure test's", () => {
    const tiers = blockAfter('## Imports and purity').map((l) => l.split(', '));
    expect(tiers).toEqual(TIERS.map((t) => [...t]));
  });

  it('its pass runs STAGES in order with the autopilot after decide, where the action and the demo place it', () => {
    const stages = blockAfter("## The monitor's pass").flatMap((l) => /^([a-z]+) /.exec(l)?.[1] ?? []);
    const placed = withStage(STAGES, { name: 'autopilot', run: async () => {} }, { after: 'decide' });
    expect(stages).toEqual(placed.map((s) => s.name));
    for (const file of ['src/monitor/scheduled.ts', 'src/demo/autopilot-parts.ts'])
      expect(source(file), file).toContain("{ name: 'autopilot', run: autopilot }, { after: 'decide' })");
  });

  it("each action's entry is as thin as it says, its ports beside it", () => {
    const text = claim("**Each action's entry is thin**");
    const most = Number(/in at most (\d+) lines/.exec(text)?.[1]);
    expect(most).toBeGreaterThan(0);
    const actions = readdirSync(join(repoRoot, 'actions')).filter((d) =>
      existsSync(join(repoRoot, 'actions', d, 'main.ts')),
    );
    expect(actions.length).toBeGreaterThanOrEqual(4);
    for (const a of actions) {
      expect(source(`actions/${a}/main.ts`).trimEnd().split('\n').length, a).toBeLessThanOrEqual(most);
      expect(existsSync(join(repoRoot, 'actions', a, 'ports.ts')), `actions/${a}/ports.ts`).toBe(true);
    }
  });

  it("every action has its row in the pipelines' table", () => {
    const actions = readdirSync(join(repoRoot, 'actions')).filter((d) =>
      existsSync(join(repoRoot, 'actions', d, 'main.ts')),
    );
    expect(actions.length).toBeGreaterThanOrEqual(4);
    for (const a of actions)
      expect(ARCHITECTURE).toMatch(new RegExp(`^\\| [^|]+ \\| \`actions/${a}/main\\.ts\``, 'm'));
  });

  it('each /topo command is one file of src/commands, listed in COMMANDS of src/commands/registry.ts', async () => {
    claim('**One file per `/topo` command**');
    const files = filesUnder('src/commands').filter((f) =>
      /^export const \w+: (?:PullCommand|DashboardCommand|Command) =/m.test(source(f)),
    );
    expect(files.length).toBe(COMMANDS.length);
    for (const file of files) {
      const mod = (await import(join(repoRoot, file))) as Record<string, unknown>;
      expect(
        Object.values(mod).some((v) => COMMANDS.includes(v as (typeof COMMANDS)[number])),
        file,
      ).toBe(true);
    }
  });

  it('the readers of a run it names are the only callers of readRuns outside src/judge', () => {
    const named = ticked(claim('**Every surface reads a run through `readRuns`**')).filter((t) =>
      t.endsWith('.ts'),
    );
    const callers = [...filesUnder('src'), ...filesUnder('actions')].filter(
      (f) => !f.startsWith('src/judge/') && /\breadRuns\(/.test(source(f)),
    );
    expect(callers.sort()).toEqual(named.sort());
  });

  it('the cores it calls pure do no I/O, and src/topology only in the files it names', () => {
    const text = claim('**No I/O in the cores**');
    const pure = srcFolders(text).filter((f) => f !== 'src/topology');
    expect(pure.length).toBeGreaterThanOrEqual(8);
    expect(pure.flatMap(filesUnder).filter(doesIO)).toEqual([]);
    // the README's architecture paragraph names no other pure core
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const said = srcFolders(/Pure cores \(([^)]*)\)/.exec(readme)?.[1] ?? '');
    expect(said.length).toBeGreaterThanOrEqual(4);
    expect(said.filter((f) => f !== 'src/topology' && !pure.includes(f))).toEqual([]);
    const topology = ticked(text).filter((t) => t.startsWith('src/topology/'));
    expect(filesUnder('src/topology').filter(doesIO).sort()).toEqual(topology.sort());
  });

  it('no file under actions/ imports the folders it says hold the rules', () => {
    const rules = srcFolders(claim('**Actions hold no rule**'));
    expect(rules.length).toBeGreaterThanOrEqual(3);
    const found = filesUnder('actions').flatMap((f) =>
      importsOf(f)
        .filter((i) => rules.some((r) => i.includes(`/${r}/`)))
        .map((i) => `${f} imports ${i}`),
    );
    expect(found).toEqual([]);
  });
});
