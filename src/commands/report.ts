// `/topo report` (a pull request's; once `/topo conclude`, the name the autopilot's dashboard keeps
// for concluding an experiment): the experiment's final report from the default branch's record,
// posted on the pull request and committed as experiments/<id>-report.md. Also on a closed pull request.
import { experimentOfPull, postFinalReport, type ReportDeps } from '../usecases/report.js';
import type { CommandContext, HandlerResult, PullCommand } from './command.js';

export const report: PullCommand = {
  name: 'report',
  where: 'pull',
  argument: { kind: 'none' },
  permission: 'write',
  recordedAtClose: false,
  onClosed: true,
  summary: 'post the experiment’s final report comparing every candidate so far, and commit it',
  run: finalReport,
};

async function finalReport(ctx: CommandContext): Promise<HandlerResult> {
  const deps: ReportDeps = {
    octokit: ctx.octokit,
    owner: ctx.owner,
    repo: ctx.repo,
    defaultBranch: ctx.defaultBranch,
    botLogin: ctx.botLogin,
    serverUrl: process.env.GITHUB_SERVER_URL,
  };
  try {
    const experimentId = await experimentOfPull(deps, ctx.pullNumber, ctx.headSha);
    const result = await postFinalReport(deps, { experimentId, issueNumber: ctx.pullNumber });
    const committed = result.commit.committed
      ? `committed as \`${result.reportPath}\` (${result.commit.sha.slice(0, 7)})`
      : `\`${result.reportPath}\` was already up to date`;
    return { ok: true, message: `Final report of \`${experimentId}\` posted below and ${committed}.` };
  } catch (error) {
    return {
      ok: false,
      message: `Could not post the report: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
