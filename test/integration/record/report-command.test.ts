// `/topo report` (a pull request's `/topo conclude` before the dashboard's took that name): the final
// report rendered from the default branch's record, committed as experiments/<id>-report.md and
// posted as one comment (edited in place when reported again).
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { CommandContext, CommandPorts } from '../../../src/commands/command.js';
import { COMMANDS } from '../../../src/commands/registry.js';
import { report as reportCommand } from '../../../src/commands/report.js';
import { readStickyComment } from '../../../src/github/sticky-comment.js';
import type { Repo } from '../../../src/github-local/index.js';
import { apply } from '../../../src/record/apply.js';
import { createRecord } from '../../../src/record/model.js';
import { renderRecordMarkdown } from '../../../src/record/render.js';
import { serializeRecord } from '../../../src/record/validate.js';
import { EXPERIMENT, OUTCOMES } from '../../fixtures/record/scenario.js';
import { useLocalGitHub } from '../../support/local-github.js';

const ID = EXPERIMENT.experiment_id;
const { gh, octokit } = useLocalGitHub();

function context(repo: Repo, pullNumber: number, headSha: string): CommandContext {
  return {
    octokit,
    owner: repo.owner.login,
    repo: repo.name,
    pullNumber,
    headSha,
    headRef: 'x',
    baseRef: repo.defaultBranch,
    defaultBranch: repo.defaultBranch,
    actor: 'alice',
    botLogin: gh.botLogin,
    ports: {} as CommandPorts,
    commands: COMMANDS,
  };
}

describe('/topo report', () => {
  it('commits the final report, links it from the record, posts it once, and is idempotent', async () => {
    const record = OUTCOMES.reduce(apply, createRecord(EXPERIMENT));
    const repo = gh.createRepo('acme/conclude', {
      files: {
        [`topologies/${ID}/experiment.yaml`]: stringify(EXPERIMENT),
        [`experiments/${ID}.json`]: serializeRecord(record),
        [`experiments/${ID}.md`]: renderRecordMarkdown(record),
      },
    });
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: 'last candidate',
      head: 'last',
      files: { [`topologies/${ID}/last.yaml`]: stringify({ name: 'last', topology: {} }) },
    });

    const first = await reportCommand.run(context(repo, pull.number, pull.head.sha));
    expect(first.ok, first.message).toBe(true);
    expect(first.message).toMatch(new RegExp(`committed as \`experiments/${ID}-report\\.md\``));
    const files = gh.files(repo);
    const report = files.get(`experiments/${ID}-report.md`)!;
    expect(report).toContain('## 3. Best topology');
    // In-process there is no GITHUB_SERVER_URL: the link defaults to github.com.
    expect(report).toContain(`(https://github.com/acme/conclude/blob/main/experiments/${ID}.md)`);
    expect(JSON.parse(files.get(`experiments/${ID}.json`)!).report.path).toBe(`experiments/${ID}-report.md`);
    expect(files.get(`experiments/${ID}.md`)).toContain(`Final report: [experiments/${ID}-report.md]`);
    const posted = await readStickyComment(octokit, {
      owner: 'acme',
      repo: 'conclude',
      issue_number: pull.number,
      purpose: 'report',
      botLogin: gh.botLogin,
    });
    expect(posted).toBe(report);

    const head = gh.state.branchSha(repo, repo.defaultBranch);
    const second = await reportCommand.run(context(repo, pull.number, pull.head.sha));
    expect(second.message).toContain('was already up to date');
    expect(gh.state.branchSha(repo, repo.defaultBranch)).toBe(head);
    const comments = await octokit.rest.issues.listComments({
      owner: 'acme',
      repo: 'conclude',
      issue_number: pull.number,
    });
    expect(comments.data).toHaveLength(1);
    expect(gh.violations()).toEqual([]);
  });

  it('explains when there is no record yet', async () => {
    const repo = gh.createRepo('acme/empty', {
      files: { [`topologies/${ID}/experiment.yaml`]: stringify(EXPERIMENT) },
    });
    const pull = gh.openPull({
      repo,
      author: 'alice',
      title: 'first',
      head: 'first',
      files: { [`topologies/${ID}/first.yaml`]: stringify({ name: 'first', topology: {} }) },
    });
    const result = await reportCommand.run(context(repo, pull.number, pull.head.sha));
    expect(result.ok).toBe(false);
    expect(result.message).toContain(
      `experiments/${ID}.json: does not exist on main: no candidate has been recorded yet`,
    );
  });
});
