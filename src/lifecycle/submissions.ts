// The bot's own record of the Requests it made for one candidate of a pull request: a hidden,
// schema-checked block at the END of the candidate's submission comment (the bot's
// `submit-<candidate>` comment, found by its marker and the bot's login). Beside the state block, it
// is the only text a command reads a pull request's runs from (`/topo state rebuild`, `/topo cancel`
// past an edited state): never a run name quoted from someone's comment, never a name derived from a
// candidate file (invariant 22). Only the block that ends the comment counts, so a copy inside the
// comment's text (an error quoting a candidate file) is never read. Pure.

import { parseRunName } from '../topology/run-name.js';
import type { RunRequest } from './model.js';
import { checkRunRequest } from './state-block.js';

/** One Request the bot made, and the Slurm job it was submitted as (when it was at that moment). */
export interface Submission {
  request: RunRequest;
  jobId?: string;
}

/** The newest submissions of a candidate a comment keeps (older ones ended long ago, in the state's summary). */
export const SUBMISSIONS_KEPT = 20;

const MARK = '<!-- topo:submissions v1';
const AT_END = /(?:^|\n)<!-- topo:submissions v1 ([A-Za-z0-9+/=]*) -->\s*$/;
const JOB_ID = /^[0-9]{1,10}(_[0-9]{1,10})?$/;

export function renderSubmissionsBlock(list: readonly Submission[]): string {
  return `${MARK} ${Buffer.from(JSON.stringify(list), 'utf8').toString('base64')} -->`;
}

/** `list` with `s` (replacing the same Request; its job id kept when `s` has none), newest last, bounded. */
export function withSubmission(list: readonly Submission[], s: Submission): Submission[] {
  const before = list.find((x) => x.request.id === s.request.id);
  const jobId = s.jobId ?? before?.jobId;
  const next = [...list.filter((x) => x.request.id !== s.request.id), { ...s, ...(jobId ? { jobId } : {}) }];
  return next.slice(-SUBMISSIONS_KEPT);
}

/** Why one record is not a run of its own Request (its name must parse to its own parts), or null. */
function inconsistency(r: RunRequest): string | null {
  const parsed = parseRunName(r.runName, r.experiment);
  if (!parsed) return `${r.runName} is not a run name of ${r.experiment}`;
  if (parsed.label !== r.id || parsed.candidate !== r.candidate || parsed.hash !== r.topologyHash)
    return `${r.runName} does not name the Request's own id, candidate and topology hash`;
  return null;
}

/**
 * The submissions the block at the end of `body` holds, each checked field by field; entries that do
 * not check are left out and said in `problems` (nothing a person typed is ever taken as a run).
 */
export function parseSubmissionsBlock(body: string): { submissions: Submission[]; problems: string[] } {
  const m = AT_END.exec(body);
  if (!m) return { submissions: [], problems: [] };
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(m[1] ?? '', 'base64').toString('utf8'));
  } catch (e) {
    return { submissions: [], problems: [`the submissions block is not JSON: ${(e as Error).message}`] };
  }
  if (!Array.isArray(data)) return { submissions: [], problems: ['the submissions block is not a list'] };
  const submissions: Submission[] = [];
  const problems: string[] = [];
  for (const [i, entry] of data.entries()) {
    try {
      const o = entry as { request?: unknown; jobId?: unknown };
      const request = checkRunRequest(o?.request, `submissions[${i}].request`);
      const wrong = inconsistency(request);
      if (wrong) throw new Error(`submissions[${i}]: ${wrong}`);
      if (o.jobId !== undefined && (typeof o.jobId !== 'string' || !JOB_ID.test(o.jobId)))
        throw new Error(`submissions[${i}].jobId is not a Slurm job id`);
      submissions.push({ request, ...(typeof o.jobId === 'string' ? { jobId: o.jobId } : {}) });
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return { submissions, problems };
}
