// The final report: `topo report <experiment>` renders it from a local record; `/topo report` on a
// pull request renders it from the record on the default branch, posts it on the pull request (one
// comment, edited in place on a second report) and commits it as experiments/<id>-report.md (the
// record's `report.concluded_at` is set the first time).

import type { Octokit } from '../github/client.js';
import { type CasCommitResult, commitWithCompareAndSwap } from '../github/commits.js';
import { upsertStickyComment } from '../github/sticky-comment.js';
import { recordFiles } from '../record/files.js';
import { recordPaths } from '../record/model.js';
import { parseRecord, RecordError } from '../record/validate.js';
import { renderFinalReport } from '../report/final-report.js';
import type { ExperimentRecord } from '../types/generated/record.js';
import { candidateFile, loadExperiment } from './record.js';

export interface ReportDeps {
  octokit: Octokit;
  owner: string;
  repo: string;
  defaultBranch: string;
  botLogin: string;
  /** Web URL of the server (GITHUB_SERVER_URL), for the link to the record. */
  serverUrl?: string;
  /** ISO time of the first report (the comment's time); the report text never reads a clock. */
  at?: string;
  maxAttempts?: number;
  backoffMs?: (attempt: number) => number;
}

export interface ReportResult {
  experimentId: string;
  report: string;
  reportPath: string;
  commit: CasCommitResult;
  commentId: number;
}

function recordUrl(deps: ReportDeps, experimentId: string): string {
  const base = (deps.serverUrl ?? 'https://github.com').replace(/\/+$/, '');
  return `${base}/${deps.owner}/${deps.repo}/blob/${deps.defaultBranch}/${recordPaths(experimentId).markdown}`;
}

/** Renders the report from the default branch's record, commits it, and posts it on the issue. */
export async function postFinalReport(
  deps: ReportDeps,
  input: { experimentId: string; issueNumber: number },
): Promise<ReportResult> {
  const paths = recordPaths(input.experimentId);
  let report = '';
  const commit = await commitWithCompareAndSwap(deps.octokit, {
    owner: deps.owner,
    repo: deps.repo,
    branch: deps.defaultBranch,
    paths: [paths.json, paths.markdown, paths.chart, paths.report],
    message: `report: final report of ${input.experimentId}`,
    maxAttempts: deps.maxAttempts,
    backoffMs: deps.backoffMs,
    update: (current) => {
      const text = current.get(paths.json);
      if (text == null)
        throw new RecordError(paths.json, [
          `does not exist on ${deps.defaultBranch}: no candidate has been recorded yet (merge or close a candidate pull request first)`,
        ]);
      const record: ExperimentRecord = parseRecord(text, paths.json);
      record.report = { path: paths.report, concluded_at: record.report?.concluded_at ?? deps.at ?? null };
      report = renderFinalReport(record, { recordUrl: recordUrl(deps, input.experimentId) });
      return { ...recordFiles(record), [paths.report]: report };
    },
  });
  const comment = await upsertStickyComment(deps.octokit, {
    owner: deps.owner,
    repo: deps.repo,
    issue_number: input.issueNumber,
    purpose: 'report',
    botLogin: deps.botLogin,
    body: report,
  });
  return {
    experimentId: input.experimentId,
    report,
    reportPath: paths.report,
    commit,
    commentId: comment.id,
  };
}

/** The experiment a pull request belongs to: the experiment.yaml of the folder its candidate is in. */
export async function experimentOfPull(
  deps: Pick<ReportDeps, 'octokit' | 'owner' | 'repo' | 'defaultBranch'>,
  pullNumber: number,
  headSha: string,
): Promise<string> {
  const files = await deps.octokit.paginate(deps.octokit.rest.pulls.listFiles, {
    owner: deps.owner,
    repo: deps.repo,
    pull_number: pullNumber,
    per_page: 100,
  });
  const folders = [
    ...new Set(files.map((f) => candidateFile(f.filename)?.folder).filter((f): f is string => !!f)),
  ];
  if (folders.length === 1) return (await loadExperiment(deps, folders[0]!, headSha)).experiment_id;
  if (folders.length > 1)
    throw new Error(
      `the pull request changes candidates of several experiments (${folders.join(', ')}): report one at a time`,
    );
  // No candidate in this pull request: fall back to the only record on the default branch.
  const { data } = await deps.octokit.rest.repos
    .getContent({ owner: deps.owner, repo: deps.repo, path: 'experiments', ref: deps.defaultBranch })
    .catch(() => ({ data: [] as unknown }));
  const ids = (Array.isArray(data) ? data : [])
    .map((e: { name: string }) => /^(.+)\.json$/.exec(e.name)?.[1])
    .filter((id): id is string => !!id);
  if (ids.length === 1) return ids[0]!;
  throw new Error(
    ids.length === 0
      ? `no experiment record under experiments/ on ${deps.defaultBranch}, and this pull request changes no candidate`
      : `this pull request changes no candidate and there are several records (${ids.join(', ')}): comment on a candidate's pull request`,
  );
}
