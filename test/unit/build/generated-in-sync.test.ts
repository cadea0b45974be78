// The check-dist habit: committed bundles and generated types must equal a fresh build.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function run(script: string): { code: number; output: string } {
  try {
    const output = execFileSync(process.execPath, [script, '--check'], { encoding: 'utf8', stdio: 'pipe' });
    return { code: 0, output };
  } catch (error) {
    const e = error as { status: number; stdout: string; stderr: string };
    return { code: e.status, output: `${e.stdout}${e.stderr}` };
  }
}

describe('committed generated files', () => {
  it('types in src/types/generated match the JSON Schemas', () => {
    const result = run('scripts/gen-types.mjs');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });

  it('action and CLI bundles match a fresh build', () => {
    const result = run('scripts/build.mjs');
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);
});
