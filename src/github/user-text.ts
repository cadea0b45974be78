// THE way text a person wrote (reject reasons, learnings, hypotheses, quoted commands) or a
// program printed (Slurm reasons, log lines) is shown in GitHub Markdown: never markup, never a
// mention, never a way out of a <details>, a table or a code block.

const ZWSP = '\u200b';

/** One line of inline Markdown: HTML and Markdown characters escaped, mentions and refs defused. */
export function inlineText(text: string, maxLength = 500): string {
  const flat = text.replace(/[\r\n\t\v\f\u2028\u2029]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '');
  const cut = flat.length > maxLength ? `${flat.slice(0, maxLength)}…` : flat;
  return (
    cut
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      // Markdown punctuation that could start emphasis, links, images, code, tables, headings, lists.
      .replace(/[\\`*_{}[\]()#+!|~]/g, (c) => `\\${c}`)
      .replace(/^([-=]|\d+\.)/, '\\$1')
      // @team, @user and #123 / GH-123 stay plain text (no notification, no cross-reference).
      .replace(/@/g, `@${ZWSP}`)
      .replace(/:\/\//g, `:${ZWSP}//`)
  );
}

/**
 * One line of text for a Markdown table cell or list item where emphasis may stay: no HTML, no
 * mention, no code span, no cell break. Lighter than inlineText (underscores, dots and
 * parentheses read as typed), for records whose Markdown people read as source too.
 */
export function safeText(text: string, maxLength = 2000): string {
  const flat = text.replace(/[\r\n\t\v\f\u2028\u2029]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '');
  const cut = flat.length > maxLength ? `${flat.slice(0, maxLength)}…` : flat;
  return cut
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[|`]/g, (c) => `\\${c}`)
    .replace(/@/g, `@${ZWSP}`)
    .trim();
}

/** A block quote of several lines, each line escaped as inlineText. */
export function quotedText(text: string, maxLines = 20, maxLineLength = 500): string {
  const lines = text.split(/\r?\n/).slice(0, maxLines);
  return lines.map((l) => `> ${inlineText(l, maxLineLength)}`).join('\n');
}

/**
 * A fenced code block that the text cannot close: the fence is longer than any backtick run inside.
 * Inside a code block GitHub shows HTML and @mentions as they are typed, without effect.
 */
export function codeBlock(text: string, language = 'text'): string {
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
  const longest = Math.max(0, ...[...clean.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${clean}\n${fence}`;
}
