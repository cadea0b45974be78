// The monitor's job summary (core.summary) for one pass: per experiment its Slurm slots, the
// queue, and each candidate's state and decision, with a link to its pull request. Pure.
import { accountingLine, type CandidateView, jobLine, nextStep, viewStanding } from './pr-comment.js';
import { code, OUTCOME_ICON } from './standing.js';

export interface SummaryExperiment {
  id: string;
  /** experiment.max_parallel (default 3). */
  maxParallel: number;
  /** The pass's views of this experiment's candidates, in queue order (first come, first served). */
  candidates: ReadonlyArray<{ pr: number; view: CandidateView }>;
}

export interface MonitorSummaryInput {
  experiments: readonly SummaryExperiment[];
  /** `https://github.com/owner/repo`, for links to the pull requests. */
  repositoryUrl?: string;
  /** GitHub requests of the pass, when counted. */
  api?: { reads: number; writes: number };
  errors?: readonly string[];
}

const HOLDS_SLOT = new Set(['submitted', 'starting', 'warming', 'stabilising', 'stable']);

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function experimentSection(e: SummaryExperiment, repo: string | undefined): string[] {
  const running = e.candidates.filter((c) => HOLDS_SLOT.has(c.view.state));
  const queue = e.candidates.filter((c) => c.view.state === 'queued');
  const out = [
    `### Experiment ${code(e.id)}`,
    '',
    `Slots: **${running.length} of ${e.maxParallel}** in use · queue: ${queue.length ? queue.map((c) => `${code(c.view.candidate)} (#${c.pr})`).join(', ') : 'empty'}`,
    '',
  ];
  // the candidates' headline notice, as their comments and checks say it (one truth)
  const accounting = e.candidates.find((c) => c.view.accountingUnreachable)?.view.accountingUnreachable;
  if (accounting) out.push(accountingLine(accounting), '');
  if (!e.candidates.length) return [...out, 'No live candidates.', ''];
  out.push('| Candidate | PR | State | Decision | Slurm | Next step |', '|---|---|---|---|---|---|');
  for (const { pr, view } of e.candidates) {
    const s = viewStanding(view);
    const link = repo ? `[#${pr}](${repo.replace(/\/+$/, '')}/pull/${pr})` : `#${pr}`;
    const change = s.change
      ? ` ${s.change.value > 0 ? '+' : ''}${Math.round(s.change.value * 1000) / 10}%`
      : '';
    out.push(
      `| ${cell(code(view.candidate))} | ${link} | ${view.state} | ${OUTCOME_ICON[s.outcome]} ${s.outcome}${change} | ${cell(jobLine(view))} | ${cell(nextStep(view, s).replace(/\*\*/g, ''))} |`,
    );
  }
  out.push('');
  return out;
}

export function renderMonitorSummary(input: MonitorSummaryInput): string {
  const out = ['## topo monitor', ''];
  if (input.api)
    out.push(`GitHub API this pass: ${input.api.reads} read(s), ${input.api.writes} write(s).`, '');
  if (!input.experiments.length) out.push('No experiments with live candidates.', '');
  for (const e of input.experiments) out.push(...experimentSection(e, input.repositoryUrl));
  if (input.errors?.length) {
    out.push('### Errors', '');
    for (const err of input.errors) out.push(`- ${cell(err)}`);
    out.push('');
  }
  return out.join('\n');
}
