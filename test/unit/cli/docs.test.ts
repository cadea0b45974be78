// docs/cli.md shows every command's --help as the code prints it (regenerate with
// `npm run build && node scripts/gen-cli-docs.mjs`), and the README's CLI table names every command.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHelp } from '../../../src/cli/args.js';
import { commands } from '../../../src/cli/commands/index.js';
import { repoRoot } from '../../support/run-action.js';

const cliDoc = readFileSync(join(repoRoot, 'docs/cli.md'), 'utf8');
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

describe('CLI documentation', () => {
  it.each(commands.map((c) => [c.name, c] as const))('docs/cli.md holds the current help of %s', (_, c) => {
    expect(cliDoc).toContain(
      `### topo ${c.name}\n\n\`\`\`text\n${renderHelp(c.name, c.summary, c.help).trimEnd()}\n\`\`\``,
    );
  });

  it('the README lists every command', () => {
    for (const c of commands) expect(readme, c.name).toMatch(new RegExp(`\\| \`topo ${c.name}\\b`));
  });
});
