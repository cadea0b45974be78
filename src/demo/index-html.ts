// index.html of the demo's output folder: every Markdown artifact (PR comments, record, final
// report) rendered to HTML on one page, with their Mermaid charts drawn by a local copy of
// mermaid.min.js (no network). Pure: returns the page as a string.
import { Marked, type Tokens } from 'marked';

/** One Markdown artifact shown as a section of the page. */
export interface HtmlSection {
  /** Anchor id (letters, digits, dashes). */
  id: string;
  title: string;
  markdown: string;
  /** The artifact's file, relative to index.html, linked from the section. */
  file?: string;
}

export interface IndexPage {
  title: string;
  /** A short paragraph under the title (plain text). */
  intro: string;
  sections: readonly HtmlSection[];
  /** Script path relative to index.html. */
  mermaidScript: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

// GitHub renders these tags in comments; anything else in raw HTML is shown as text.
const ALLOWED_TAG = /^<\/?(details|summary|br|sub|sup|b|i|em|strong|code|kbd|p|hr)(\s+open)?\s*\/?>$/i;

function rawHtml(text: string): string {
  // Tag by tag: hidden comments (e.g. the observation block) vanish, allowed tags pass, the rest is text.
  let out = '';
  let last = 0;
  for (const match of text.matchAll(/<!--[\s\S]*?-->|<\/?[A-Za-z][^<>]*>/g)) {
    out += escapeHtml(text.slice(last, match.index));
    const tag = match[0];
    out += tag.startsWith('<!--') ? '' : ALLOWED_TAG.test(tag) ? tag : escapeHtml(tag);
    last = match.index + tag.length;
  }
  return out + escapeHtml(text.slice(last));
}

function markdownRenderer(): Marked {
  return new Marked({
    gfm: true,
    renderer: {
      code({ text, lang }: Tokens.Code): string {
        if ((lang ?? '').trim() === 'mermaid') return `<pre class="mermaid">${escapeHtml(text)}</pre>\n`;
        const cls = lang ? ` class="language-${escapeHtml(lang.trim())}"` : '';
        return `<pre><code${cls}>${escapeHtml(text)}</code></pre>\n`;
      },
      html({ text }: Tokens.HTML | Tokens.Tag): string {
        return rawHtml(text);
      },
    },
  });
}

/** Markdown to HTML as GitHub would show it: GFM tables, Mermaid blocks left for mermaid.js. */
export function markdownToHtml(markdown: string): string {
  return markdownRenderer().parse(markdown, { async: false }) as string;
}

const STYLE = `
body { font: 15px/1.5 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; color: #1f2328; }
header { background: #24292f; color: #fff; padding: 16px 32px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header p { margin: 0; color: #d0d7de; }
nav { padding: 8px 32px; border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
nav a { margin-right: 16px; color: #0969da; text-decoration: none; }
main { max-width: 1240px; margin: 0 auto; padding: 8px 32px 64px; }
section { border: 1px solid #d0d7de; border-radius: 6px; margin: 24px 0; padding: 0 24px 16px; }
section > h2.artifact { font-size: 18px; border-bottom: 1px solid #d0d7de; padding: 12px 0 8px; margin: 0 0 8px; }
section > h2.artifact a.file { font-size: 13px; font-weight: normal; margin-left: 12px; color: #57606a; }
table { border-collapse: collapse; margin: 12px 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { background: #eff1f3; padding: 1px 4px; border-radius: 4px; font-size: 90%; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
pre.mermaid { background: #fff; text-align: center; }
`;

/** The whole page. */
export function renderIndexHtml(page: IndexPage): string {
  const nav = page.sections
    .map((s) => `<a href="#${escapeHtml(s.id)}">${escapeHtml(s.title)}</a>`)
    .join('\n');
  const sections = page.sections
    .map((s) => {
      const link = s.file ? ` <a class="file" href="${escapeHtml(s.file)}">${escapeHtml(s.file)}</a>` : '';
      return `<section id="${escapeHtml(s.id)}">\n<h2 class="artifact">${escapeHtml(s.title)}${link}</h2>\n${markdownToHtml(s.markdown)}</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}</style>
</head>
<body data-mermaid="pending">
<header><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.intro)}</p></header>
<nav>
${nav}
</nav>
<main>
${sections}
</main>
<script src="${escapeHtml(page.mermaidScript)}"></script>
<script>
// Draws every Mermaid block; data-mermaid tells a reader (or a test) when the charts are done.
(function () {
  if (typeof mermaid === 'undefined') { document.body.dataset.mermaid = 'missing'; return; }
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: 'strict',
    // The default palette draws xychart lines in pale pastel; use GitHub's strong colours.
    themeVariables: { xyChart: { plotColorPalette: '#0969da, #cf222e, #1a7f37, #8250df, #bf8700, #57606a' } },
  });
  mermaid.run({ querySelector: 'pre.mermaid' }).then(
    function () { document.body.dataset.mermaid = 'done'; },
    function (error) { document.body.dataset.mermaid = 'error'; console.error(error); }
  );
})();
</script>
</body>
</html>
`;
}
