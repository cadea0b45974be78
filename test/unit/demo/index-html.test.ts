import { describe, expect, it } from 'vitest';
import { escapeHtml, markdownToHtml, renderIndexHtml } from '../../../src/demo/index-html.js';

describe('markdownToHtml', () => {
  it('leaves mermaid blocks for mermaid.js and escapes their text', () => {
    const html = markdownToHtml('# Title\n\n```mermaid\nxychart-beta\n  title "a < b"\n  line [1, 2]\n```\n');
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain(
      '<pre class="mermaid">xychart-beta\n  title &quot;a &lt; b&quot;\n  line [1, 2]</pre>',
    );
  });

  it('renders GFM tables and other code blocks as code', () => {
    const html = markdownToHtml('| a | b |\n|---|---|\n| 1 | 2 |\n\n```yaml\nx: <y>\n```\n');
    expect(html).toContain('<table>');
    expect(html).toContain('<td>1</td>');
    expect(html).toContain('<pre><code class="language-yaml">x: &lt;y&gt;</code></pre>');
  });

  it('drops hidden comments, keeps details/summary, and shows other raw HTML as text', () => {
    const html = markdownToHtml(
      '<!-- topo:observation v1\n{"run_name":"x"}\n-->\n\n<details>\n<summary>More</summary>\n\ntext\n\n</details>\n\n<script>alert(1)</script>\n',
    );
    expect(html).not.toContain('topo:observation');
    expect(html).toContain('<details>');
    expect(html).toContain('<summary>More</summary>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });
});

describe('renderIndexHtml', () => {
  it('links every section and loads the local mermaid script', () => {
    const page = renderIndexHtml({
      title: 'topo demo',
      intro: 'from <cmd>',
      mermaidScript: 'mermaid.min.js',
      sections: [
        { id: 'final-report', title: 'Final report', markdown: '## Report', file: 'final-report.md' },
        { id: 'comment-baseline', title: 'PR comment: baseline', markdown: 'hi' },
      ],
    });
    expect(page).toContain('<a href="#final-report">Final report</a>');
    expect(page).toContain('<section id="comment-baseline">');
    expect(page).toContain('<a class="file" href="final-report.md">final-report.md</a>');
    expect(page).toContain('<script src="mermaid.min.js"></script>');
    expect(page).toContain('from &lt;cmd&gt;');
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org)/); // no network
  });

  it('escapes HTML special characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
