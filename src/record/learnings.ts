// Learnings (the seed's "skill reflections") from `/topo learn <text>` comments and from a
// "Learnings" section in the pull request body.
import type { SkillReflection } from '../types/generated/record.js';

const TOPICS = ['metrics', 'queries', 'topology_knobs', 'run_workflow', 'failure_mode', 'other'] as const;
type Topic = (typeof TOPICS)[number];

/**
 * One learning from free text. An optional `topic:` prefix picks the topic (`queries: use …`);
 * a `-> <suggestion>` suffix becomes the suggested skill update.
 */
export function learningFromText(
  text: string,
  source: string | null,
  author: string | null,
): SkillReflection | null {
  let rest = text.replace(/\s+/g, ' ').trim();
  if (!rest) return null;
  let topic: Topic = 'other';
  const prefix = /^([a-z_]+):\s*(.+)$/i.exec(rest);
  if (prefix && (TOPICS as readonly string[]).includes(prefix[1]!.toLowerCase())) {
    topic = prefix[1]!.toLowerCase() as Topic;
    rest = prefix[2]!;
  }
  let suggestion: string | null = null;
  const arrow = rest.indexOf(' -> ');
  if (arrow > 0) {
    suggestion = rest.slice(arrow + 4).trim() || null;
    rest = rest.slice(0, arrow).trim();
  }
  return { topic, learning: rest, suggested_skill_update: suggestion, source, author };
}

/** Bullet items (or paragraphs) under a `Learnings` heading of a pull request body. */
export function learningsSection(body: string | null | undefined): string[] {
  if (!body) return [];
  const lines = body.replace(/\r\n/g, '\n').split('\n');
  const start = lines.findIndex((l) => /^#{1,6}\s*(learnings?|skill reflections?)\s*:?\s*$/i.test(l.trim()));
  if (start < 0) return [];
  const level = /^(#+)/.exec(lines[start]!.trim())![1]!.length;
  const items: string[] = [];
  let current: string | null = null;
  const flush = () => {
    if (current?.trim()) items.push(current.trim());
    current = null;
  };
  for (const raw of lines.slice(start + 1)) {
    const line = raw.trim();
    const heading = /^(#+)\s/.exec(line);
    if (heading && heading[1]!.length <= level) break;
    if (/^<!--.*-->$/.test(line)) continue;
    const bullet = /^([-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (bullet) {
      flush();
      current = bullet[2]!;
    } else if (!line) {
      flush();
    } else {
      current = current === null ? line : `${current} ${line}`;
    }
  }
  flush();
  return items.filter((i) => !/^(none|n\/a|-)$/i.test(i));
}

/** All learnings of a pull request body, as skill reflections. */
export function learningsFromBody(body: string | null | undefined, author: string | null): SkillReflection[] {
  return learningsSection(body)
    .map((text) => learningFromText(text, 'pull request body', author))
    .filter((l): l is SkillReflection => l !== null);
}
