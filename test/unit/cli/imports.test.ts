// src/cli has no file cycle: args.ts (options) and command.ts (a command's shape) both sit above
// errors.ts (exit codes and errors) and never import each other's values (issue 22's args ↔ command).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../support/run-action.js';

const cliRoot = join(repoRoot, 'src/cli');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Relative imports (type-only ones included: a cycle of types is still a cycle to read). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)[^;]*? from '(\.[^']+)';/gms)].map((m) =>
    resolve(dirname(file), (m[1] as string).replace(/\.js$/, '.ts')),
  );
}

function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe('src/cli imports', () => {
  it('form no cycle', () => {
    const graph = new Map(files(cliRoot).map((f) => [f, importsOf(f)]));
    const found = cycles(graph).map((c) => c.map((f) => relative(repoRoot, f)).join(' → '));
    expect(found).toEqual([]);
  });
});
