// Splits a Markdown body that is too long for one GitHub comment (65,536 characters) into parts
// that each render correctly: a part never ends inside a fenced code block or a <details> block
// (they are closed and reopened across the cut). When there are more parts than allowed, the
// END is kept (the Atlantis habit: the verdict and the machine-readable block live at the end).
export const GITHUB_COMMENT_LIMIT = 65_536;

export interface SplitOptions {
  /** Keep at most this many parts, dropping from the beginning. Default: unlimited. */
  maxParts?: number;
}

interface Open {
  fence?: string;
  /** The lines that opened each enclosing <details> (to reopen them in the next part). */
  details: string[];
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
const CONTINUED = '_(continued from the previous comment)_';

function closing(open: Open): string[] {
  const lines: string[] = [];
  if (open.fence) lines.push(open.fence.trim().match(/^ {0,3}(`{3,}|~{3,})/)?.[1] ?? '```');
  for (let i = 0; i < open.details.length; i++) lines.push('</details>');
  return lines;
}

function reopening(open: Open): string[] {
  const lines = [...open.details];
  if (open.fence) lines.push(open.fence);
  return lines;
}

function track(open: Open, line: string): void {
  const fence = FENCE.exec(line);
  if (open.fence) {
    const marker = open.fence.trim().match(/^(`{3,}|~{3,})/)?.[1] ?? '```';
    if (
      fence?.[1]?.startsWith(marker[0] as string) &&
      (fence[1]?.length ?? 0) >= marker.length &&
      !fence?.[2]?.trim()
    ) {
      open.fence = undefined;
    }
    return;
  }
  if (fence) {
    open.fence = line;
    return;
  }
  const opens = (line.match(/<details\b[^>]*>/gi) ?? []).length;
  const closes = (line.match(/<\/details>/gi) ?? []).length;
  for (let i = 0; i < opens; i++) open.details.push('<details>');
  if (opens && /<summary>/i.test(line)) open.details[open.details.length - 1] = line.trim();
  for (let i = 0; i < closes; i++) open.details.pop();
}

const size = (lines: string[]) => lines.reduce((n, l) => n + l.length + 1, 0);

export function splitComment(
  body: string,
  limit = GITHUB_COMMENT_LIMIT,
  options: SplitOptions = {},
): string[] {
  if (limit < 200) throw new Error(`comment limit ${limit} is too small to split into readable parts`);
  if (body.length <= limit) return [body];
  const budget = limit - 120; // room for the continuation and truncation notes
  const parts: string[] = [];
  const open: Open = { details: [] };
  let current: string[] = [];
  let currentSize = 0;
  const flush = () => {
    parts.push([...current, ...closing(open)].join('\n'));
    current = [CONTINUED, '', ...reopening(open)];
    currentSize = size(current);
  };
  for (const rawLine of body.split('\n')) {
    // A single line longer than a part is cut into pieces (rare: a huge table row or blob).
    const pieces: string[] = [];
    for (let i = 0; i < rawLine.length || i === 0; i += Math.floor(budget / 2)) {
      pieces.push(rawLine.slice(i, i + Math.floor(budget / 2)));
    }
    for (const line of pieces) {
      const after: Open = { fence: open.fence, details: [...open.details] };
      track(after, line);
      if (current.length && currentSize + line.length + 1 + size(closing(after)) > budget) flush();
      current.push(line);
      currentSize += line.length + 1;
      track(open, line);
    }
  }
  parts.push([...current, ...closing(open)].join('\n'));
  const max = options.maxParts ?? Number.POSITIVE_INFINITY;
  if (parts.length <= max) return parts;
  const dropped = parts.length - max;
  const kept = parts.slice(dropped);
  kept[0] = `_(${dropped} earlier part${dropped === 1 ? '' : 's'} omitted: the comment was too long)_\n\n${(kept[0] as string).replace(`${CONTINUED}\n\n`, '')}`;
  return kept;
}

/** One comment's worth of `body`, keeping the end. */
export function truncateComment(body: string, limit = GITHUB_COMMENT_LIMIT): string {
  return splitComment(body, limit, { maxParts: 1 })[0] as string;
}
