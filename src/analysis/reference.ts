// What a decision was made against (metrics.schema.json `reference`: role, name, pull request), as
// a structured value, and its two spellings for people. Nothing parses a reference back from text:
// the one reader of the old string form is ./stored.ts (older comments and records). Pure.
import type { DecisionReference } from '../types/generated/metrics.js';

export type { DecisionReference };
export type ReferenceRole = DecisionReference['role'];

/** A reference value; `pr` only for another pull request's leading candidate. */
export function decisionReference(role: ReferenceRole, name: string, pr?: number | null): DecisionReference {
  return { role, name, pr: pr ?? null };
}

/** The same reference (role, name and pull request). */
export function sameReference(
  a: DecisionReference | null | undefined,
  b: DecisionReference | null | undefined,
) {
  return !!a && !!b && a.role === b.role && a.name === b.name && (a.pr ?? null) === (b.pr ?? null);
}

/**
 * The reference in plain text (describeReference without the code quotes): "the baseline b", "the
 * baseline" (named `baseline`), "the baseline (the current best)", "the leading candidate a (#12)",
 * a named run's own name.
 */
export function referenceText(r: DecisionReference): string {
  const name = r.pr != null ? `${r.name} (#${r.pr})` : r.name;
  if (r.role === 'run') return name;
  if (r.name === 'baseline')
    return r.role === 'baseline' ? 'the baseline' : 'the baseline (the current best)';
  return `the ${r.role} ${name}`;
}

/**
 * "the baseline `8gpu`"; the baseline named `baseline`: "the baseline"; "the baseline (the current
 * best)"; "the leading candidate `a` (#12)" (GitHub links the pull request); a named run: "`run`".
 * Names are code-quoted, so a candidate name cannot inject Markdown.
 */
export function describeReference(r: DecisionReference): string {
  const quoted = r.pr != null ? `${code(r.name)} (#${r.pr})` : code(r.name);
  if (r.role === 'run') return quoted;
  if (r.name === 'baseline')
    return r.role === 'baseline' ? 'the baseline' : 'the baseline (the current best)';
  return `the ${r.role} ${quoted}`;
}

/** Inline code that a backtick in user text cannot close. */
export function code(s: string): string {
  const clean = s.replace(/[\r\n]+/g, ' ');
  const fence = clean.includes('`') ? '``' : '`';
  return `${fence}${fence === '``' ? ' ' : ''}${clean}${fence === '``' ? ' ' : ''}${fence}`;
}
