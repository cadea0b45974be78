// Doctor's check that what the caller workflows run exists: every `uses:` of the callers `topo setup`
// wrote, followed one level into the reusable workflows they call, names a workflow or an action that
// exists at its ref (a caller pinned to a commit of the default branch reaches `actions/<x>@v1`, which
// does not exist before the first release). Moving refs are a warning: they run every release unreviewed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gitFileReader } from '../setup/git-files.js';
import { unresolvedUses, where } from '../setup/pins.js';
import type { Check } from './checks.js';

const NAME = 'workflow pins';
const CALLERS = ['validate', 'submit', 'monitor', 'record'].map((n) => `topology-${n}.yml`);

/** The check; GITHUB_SERVER_URL (else github.com) is where the `uses:` are looked up, over git. */
export async function checkWorkflowPins(repoDir: string, env: NodeJS.ProcessEnv): Promise<Check> {
  const callers = CALLERS.map((f) => `.github/workflows/${f}`)
    .filter((file) => existsSync(join(repoDir, file)))
    .map((file) => ({ file, text: readFileSync(join(repoDir, file), 'utf8') }));
  if (!callers.length)
    return { name: NAME, status: 'skip', detail: 'no caller workflow to follow (see the workflow checks)' };
  const files = gitFileReader(env);
  try {
    const { checked, unresolved, moving } = await unresolvedUses(files.read, callers);
    if (unresolved.length)
      return {
        name: NAME,
        status: 'fail',
        detail: unresolved.map((u) => `${where(u.ref)}: ${u.problem}`).join('; '),
        fix: 'call a release tag whose workflows name their actions by full SHA: `topo setup --force --ref vX.Y.Z` (docs/adopting.md; before a release, make one in your fork: "Before a release")',
      };
    if (moving.length)
      return {
        name: NAME,
        status: 'warn',
        detail: `${checked} uses: resolve; moving refs run every release without review: ${moving.map(where).join('; ')}`,
        fix: 'pin a release: `topo setup --force --ref vX.Y.Z` writes its full SHA',
      };
    return { name: NAME, status: 'ok', detail: `${checked} uses: resolve, each at a full commit SHA` };
  } catch (error) {
    return {
      name: NAME,
      status: 'warn',
      detail: `could not look the workflows' uses: up (${(error as Error).message})`,
      fix: 'run doctor where the GitHub server is reachable (GITHUB_SERVER_URL for GitHub Enterprise)',
    };
  } finally {
    files.close();
  }
}
