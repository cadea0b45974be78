// A candidate's comment behind one write gate (the GitHub API budget): nothing for an unchanged
// candidate or a final comment; a running candidate whose numbers only moved at most every
// comment_interval_minutes (src/report/comment-throttle.ts); with metrics or the cluster
// unavailable, its last comment with a notice on top. The marks it leaves in the comment are the
// pass's only memory besides the observation block. Pure.
import { createHash } from 'node:crypto';
import { inlineText } from '../github/user-text.js';
import {
  parseCommentStamp,
  renderCommentStamp,
  shouldWriteCheck,
  shouldWriteComment,
} from '../report/comment-throttle.js';
import {
  ACCOUNTING_UNREACHABLE,
  type CandidateView,
  renderMonitorComment,
  viewStanding,
} from '../report/pr-comment.js';
import { EXPERIMENT_DEFAULTS } from '../topology/settings.js';
import { iso } from './judge.js';
import type { MonitorJob } from './ports.js';

const HASH_MARK = 'topo:monitor-hash:';
const UNAVAILABLE_MARK = 'topo:unavailable-since:';
export const FINAL_MARK = 'final-job:';

/** Why a candidate's comment is held (only the notice on top of its last comment changes). */
export type HeldBy = 'Metrics unavailable' | 'Runner clock off';

/** A judged candidate's comment for this pass. */
export interface CommentPlan {
  /** The view as published (with the unavailability note when held). */
  view: CandidateView;
  /** The comment to write now; undefined: none is due. */
  text?: string;
  /** Metrics unavailable: only the notice on its last comment; its pull request's check and label stay. */
  held: boolean;
  /** Its comment is final with this write (the job ended and its data settled). */
  final: boolean;
  /** What its pull request's check run says changes with this write (state or decision). */
  checkDue: boolean;
}

export interface CommentContext {
  job?: MonitorJob;
  ended: boolean;
  /** The comment as it stands. */
  current?: string;
  /** The evaluation time and scrape interval (unix seconds). */
  evalTs: number;
  scrape: number;
  /** Why the metrics are unavailable this pass, if they are. */
  unavailable: string | null;
  /** What the notice calls it (metrics unavailable unless the runner's clock is off). */
  heldBy?: HeldBy;
  refresh: boolean;
  now: number;
}

export function planComment(view: CandidateView, x: CommentContext): CommentPlan {
  if (x.unavailable && x.job?.startTs) return heldComment(view, x, x.unavailable, x.heldBy);
  const body = renderMonitorComment(view);
  // An ended run's comment is final once the data has settled (a few scrapes after the end):
  // later passes leave it alone even if Prometheus drops or ages the run's series.
  const { job, current, evalTs } = x;
  const finalMark =
    job && x.ended && job.endTs && evalTs >= job.endTs + 3 * x.scrape ? ` ${FINAL_MARK}${job.jobId}` : '';
  const hash = contentHash(`${body}${finalMark}`);
  const stamp = { state: view.state, outcome: viewStanding(view).outcome, hash, writtenAtMs: evalTs * 1000 };
  const isFinal = job !== undefined && !!current?.includes(`${FINAL_MARK}${job.jobId} -->`);
  const wasUnavailable = !!current?.includes(UNAVAILABLE_MARK);
  const interval = view.commentIntervalMinutes ?? EXPERIMENT_DEFAULTS.commentIntervalMinutes;
  const previous = parseCommentStamp(current);
  const due =
    !isFinal &&
    (wasUnavailable ||
      alertsOf(body) !== alertsOf(current) ||
      (x.refresh && previous?.hash !== hash) ||
      shouldWriteComment(previous, stamp, evalTs * 1000, interval));
  // moving numbers go to the comment; the check is rewritten when what it says changes
  const checkDue =
    due &&
    (wasUnavailable ||
      x.refresh ||
      alertsOf(body) !== alertsOf(current) ||
      shouldWriteCheck(previous, stamp));
  const text = due
    ? `${body}\n<!-- ${HASH_MARK}${hash}${finalMark} -->\n${renderCommentStamp(stamp)}`
    : undefined;
  return { view, held: false, final: finalMark !== '', checkDue, ...(text ? { text } : {}) };
}

/** Metrics unavailable: the last comment with the notice on top; nothing else changes. */
function heldComment(
  view: CandidateView,
  x: CommentContext,
  reason: string,
  what: HeldBy = 'Metrics unavailable',
): CommentPlan {
  const since = unavailableSince(x.current) ?? iso(x.now) ?? '';
  const noted = withUnavailableNotice(x.current, since, reason, what);
  const notes = [...(view.notes ?? []), `${what.toLowerCase()} since ${since}`];
  const text = noted !== undefined && noted !== x.current ? noted : undefined;
  return { view: { ...view, notes }, held: true, final: false, checkDue: false, ...(text ? { text } : {}) };
}

/**
 * What a comment warns of that is shown at once, comment and check alike: the jobs it names as
 * conflicts (judge.ts conflictNote) and whether it says Slurm accounting is unreachable.
 */
function alertsOf(text: string | undefined): string {
  const conflicts = [...(text ?? '').matchAll(/Conflict: Slurm job (\S+) /g)].map((m) => m[1]);
  return [...conflicts, text?.includes(ACCOUNTING_UNREACHABLE) ? 'accounting' : ''].join(' ');
}

function contentHash(body: string): string {
  return createHash('sha256').update(body).digest('hex').slice(0, 16);
}

/** When the metrics became unavailable, from the notice of an earlier pass. */
export function unavailableSince(comment: string | undefined): string | null {
  const m = comment ? new RegExp(`<!-- ${UNAVAILABLE_MARK}([0-9TZ:.-]+) -->`).exec(comment) : null;
  return m?.[1] ?? null;
}

/** The comment with one notice line on top (an earlier notice replaced); undefined without a comment. */
export function withUnavailableNotice(
  comment: string | undefined,
  since: string,
  reason: string,
  what: HeldBy | 'Cluster unreachable' | 'Accounting unreachable' = 'Metrics unavailable',
): string | undefined {
  if (comment === undefined) return undefined;
  const body = comment.replace(
    /^> ⚠️ (Metrics unavailable|Cluster unreachable|Accounting unreachable|Runner clock off) since [^\n]*\n\n/,
    '',
  );
  return `> ⚠️ ${what} since ${since} (${inlineText(reason, 300)}): nothing is judged until ${what === 'Runner clock off' ? 'the clocks agree' : 'it is back'}; retried every pass. <!-- ${UNAVAILABLE_MARK}${since} -->\n\n${body}`;
}
