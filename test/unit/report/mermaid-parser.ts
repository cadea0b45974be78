// Mermaid's own parser in Node: Mermaid needs a DOM for DOMPurify, which jsdom provides.
let parser: ((text: string) => Promise<unknown>) | undefined;

export async function mermaidParse(text: string): Promise<unknown> {
  if (!parser) {
    const { JSDOM } = (await import('jsdom' as string)) as {
      JSDOM: new (html: string) => { window: { document: unknown } };
    };
    const dom = new JSDOM('<!doctype html><html><body></body></html>');
    Object.assign(globalThis, { window: dom.window, document: dom.window.document });
    const mermaid = (await import('mermaid')).default;
    parser = (t: string) => mermaid.parse(t);
  }
  return parser(text);
}

/** The bodies of the ```mermaid blocks of a Markdown text. */
export function mermaidBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}
