// Markdown of the record and the report as safe HTML for the static site: raw HTML is shown as
// text, links only to http(s), relative paths and anchors, images as their alt text, and Mermaid
// blocks left out (the site draws its own SVG charts, so it needs no script).
import { Marked, type Tokens } from 'marked';
import { escapeHtml } from '../demo/index-html.js';

export { escapeHtml };

/** A link target the site may keep: http(s), a relative path or an anchor; never javascript: or data:. */
export function safeHref(href: string): string | undefined {
  const h = href.trim();
  if (/^https?:\/\//i.test(h) || h.startsWith('#')) return h;
  if (/^[a-z][a-z0-9+.-]*:/i.test(h) || h.startsWith('//')) return undefined;
  return h;
}

const marked = new Marked({
  gfm: true,
  renderer: {
    code({ text, lang }: Tokens.Code): string {
      if ((lang ?? '').trim() === 'mermaid') return '';
      return `<pre><code>${escapeHtml(text)}</code></pre>\n`;
    },
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      // Hidden comments (the observation block) vanish; every tag is shown as text.
      return escapeHtml(text.replace(/<!--[\s\S]*?-->/g, ''));
    },
    link({ href, tokens }: Tokens.Link): string {
      const inner = this.parser.parseInline(tokens);
      const safe = safeHref(href);
      return safe ? `<a href="${escapeHtml(safe)}">${inner}</a>` : inner;
    },
    image({ text }: Tokens.Image): string {
      return escapeHtml(text);
    },
  },
});

export function markdownToSafeHtml(markdown: string): string {
  return marked.parse(markdown, { async: false }) as string;
}
