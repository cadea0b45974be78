// `topo suggest --open-prs` against the local GitHub API (real state, every request and response
// checked against GitHub's OpenAPI description): one branch, one commit and one pull request per
// proposal, the hypothesis and expected effect in the body; a re-run opens nothing new.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Candidate } from '../../../src/types/generated/candidate.js';
import { runTopo } from '../../support/cli.js';
import { useLocalGitHub } from '../../support/local-github.js';
import { createExperimentRepo, EXPERIMENT_ID } from './experiment-repo.js';

const { gh: server } = useLocalGitHub();

const topo = runTopo;

describe('topo suggest --open-prs', () => {
  it('opens one pull request per proposal with the candidate file, and counts open ones as tried', async () => {
    const repo = createExperimentRepo('twin-renderer-bound');
    repo.addRun('baseline', null, {}, 'accepted');
    const gh = server.createRepo('nvlabs/alpasim-topo', { defaultBranch: 'main', files: repo.files() });
    const env = {
      GITHUB_TOKEN: server.token,
      GITHUB_API_URL: server.url,
      GITHUB_REPOSITORY: 'nvlabs/alpasim-topo',
    };

    const first = await topo(['suggest', EXPERIMENT_ID, '--open-prs', '--json'], repo.dir, env);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const out = JSON.parse(first.stdout);
    const n = out.proposals.length;
    expect(n).toBeGreaterThanOrEqual(1);
    expect(n).toBeLessThanOrEqual(3);
    expect(out.pull_requests.length).toBe(n);
    expect(out.pull_requests.every((p: { created: boolean }) => p.created)).toBe(true);

    const pulls = server.state.pullsOf(gh);
    expect(pulls.length).toBe(n);
    for (const proposal of out.proposals) {
      const pr = out.pull_requests.find((p: { name: string }) => p.name === proposal.name);
      const pull = pulls.find((p) => p.number === pr.number)!;
      expect(pull.head.ref).toBe(`topo/${EXPERIMENT_ID}/${proposal.name}`);
      expect(pull.base.ref).toBe('main');
      expect(pull.body).toContain(proposal.hypothesis);
      expect(pull.body).toContain(proposal.expected_effect);
      expect(pull.body).toMatch(
        /\*\*Predicted\.\*\* Predicted -?[\d.]+% faster \[-?[\d.]+%, -?[\d.]+%\] than baseline/,
      );
      // The branch holds exactly the candidate file on top of main.
      const files = server.files(gh, pull.head.ref);
      const text = files.get(proposal.path);
      expect(text).toBeDefined();
      const candidate = parse(text!) as Candidate;
      expect(candidate.name).toBe(proposal.name);
      expect(candidate.parent).toBe('baseline');
      expect(server.files(gh, 'main').has(proposal.path)).toBe(false);
    }
    // --open-prs leaves the working tree alone: the pull request is the candidate.
    expect(out.proposals.every((p: { written: boolean }) => !p.written)).toBe(true);

    // A second round while those are open: the open pull requests count as tried.
    const again = JSON.parse(
      (await topo(['suggest', EXPERIMENT_ID, '--open-prs', '--json', '--count', '2'], repo.dir, env)).stdout,
    );
    const firstHashes = new Set(out.proposals.map((p: { hash: string }) => p.hash));
    const firstNames = new Set(out.proposals.map((p: { name: string }) => p.name));
    for (const p of again.proposals) {
      expect(firstHashes.has(p.hash)).toBe(false);
      expect(firstNames.has(p.name)).toBe(false);
    }
    expect(server.state.pullsOf(gh).length).toBe(n + again.proposals.length);
    expect(server.violations()).toEqual([]);
  });

  it('needs a token and a repository', async () => {
    const repo = createExperimentRepo('twin-renderer-bound');
    repo.addRun('baseline', null, {}, 'accepted');
    const noToken = await topo(['suggest', EXPERIMENT_ID, '--open-prs'], repo.dir, {});
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('--open-prs needs a token in GITHUB_TOKEN');
    const noRepo = await topo(['suggest', EXPERIMENT_ID, '--open-prs'], repo.dir, {
      GITHUB_TOKEN: server.token,
    });
    expect(noRepo.code).toBe(2);
    expect(noRepo.stderr).toContain('--open-prs needs --repo owner/name');
  });
});
