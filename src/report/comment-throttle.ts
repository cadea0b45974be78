// When the monitor rewrites a candidate's comment (GitHub API budget): never when the content is
// unchanged; at once when the candidate's state or decision changes or the run has ended; else,
// while it runs and only its numbers move, at most every comment_interval_minutes. Pure: the
// previous write is read back from a stamp the comment carries, so no state is kept elsewhere.

export interface CommentWrite {
  /** Candidate state (queued … stable, finished, stopped, failed). */
  state: string;
  /** The standing's outcome (measuring, better, worse, equivalent, reference, failed, undecided). */
  outcome: string;
  /** Hash of the comment's content. */
  hash: string;
}

export interface CommentStamp extends CommentWrite {
  /** When it was written (unix ms; the evaluation time, not a wall clock). */
  writtenAtMs: number;
}

const ENDED = new Set(['finished', 'stopped', 'failed']);

export function shouldWriteComment(
  previous: CommentStamp | undefined,
  next: CommentWrite,
  nowMs: number,
  intervalMinutes: number,
): boolean {
  if (!previous) return true;
  if (previous.hash === next.hash) return false;
  if (previous.state !== next.state || previous.outcome !== next.outcome) return true;
  if (ENDED.has(next.state)) return true;
  const interval = Number.isFinite(intervalMinutes) && intervalMinutes > 0 ? intervalMinutes : 15;
  // A clock that went backwards (or a stamp from the future) must not silence a comment forever.
  if (nowMs < previous.writtenAtMs) return true;
  return nowMs - previous.writtenAtMs >= interval * 60_000;
}

/**
 * Whether a comment write also rewrites the check run: only when what the check says changes (the
 * state or the decision) or the run ended. A running candidate's moving numbers are the comment's
 * business; the check's title and conclusion stay until the decision moves (API budget).
 */
export function shouldWriteCheck(previous: CommentStamp | undefined, next: CommentWrite): boolean {
  if (!previous) return true;
  return previous.state !== next.state || previous.outcome !== next.outcome || ENDED.has(next.state);
}

const STAMP = /<!-- topo:written state=([a-z-]+) outcome=([a-z-]+) hash=([0-9a-f]+) at=(\d+) -->/;

/** The hidden line a written comment ends with. */
export function renderCommentStamp(s: CommentStamp): string {
  for (const [k, v] of [
    ['state', s.state],
    ['outcome', s.outcome],
  ] as const)
    if (!/^[a-z-]+$/.test(v))
      throw new Error(`comment stamp ${k} "${v}" must be lower-case letters and dashes`);
  if (!/^[0-9a-f]+$/.test(s.hash)) throw new Error(`comment stamp hash "${s.hash}" must be hexadecimal`);
  return `<!-- topo:written state=${s.state} outcome=${s.outcome} hash=${s.hash} at=${Math.floor(s.writtenAtMs)} -->`;
}

/** The stamp of a comment body the bot wrote (the last one wins); undefined when absent. */
export function parseCommentStamp(body: string | undefined): CommentStamp | undefined {
  if (!body) return undefined;
  const all = [...body.matchAll(new RegExp(STAMP.source, 'g'))];
  const m = all[all.length - 1];
  if (!m) return undefined;
  return { state: m[1] as string, outcome: m[2] as string, hash: m[3] as string, writtenAtMs: Number(m[4]) };
}
