// One finding of validation: every finding names the file, line, column and key path.

export type Severity = 'error' | 'warning';

export interface Issue {
  /** Stable rule id, e.g. `unknown-key`, `gpu-index`, `capacity-imbalance`. */
  rule: string;
  severity: Severity;
  file: string;
  /** 1-based line and column of the offending node (the key for an unknown key). */
  line: number;
  column: number;
  /** Dotted key path with list indices, e.g. `topology.services.driver.gpus[2]`; empty for the whole file. */
  keyPath: string;
  /** What is wrong, why (the AlpaSim reason) and what would be right. */
  message: string;
}

export type PathSegment = string | number;

/** `['topology','services','driver','gpus',2]` -> `topology.services.driver.gpus[2]`. */
export function formatKeyPath(path: readonly PathSegment[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

export function errorsOf(issues: readonly Issue[]): Issue[] {
  return issues.filter((i) => i.severity === 'error');
}

export function warningsOf(issues: readonly Issue[]): Issue[] {
  return issues.filter((i) => i.severity === 'warning');
}

/** Sorted by line, then column, then rule, so reports are stable. */
export function sortIssues(issues: readonly Issue[]): Issue[] {
  return [...issues].sort((a, b) => a.line - b.line || a.column - b.column || a.rule.localeCompare(b.rule));
}

/** `file:line:column: severity [rule] keyPath: message`, the compiler-style line people and editors read. */
export function formatIssue(issue: Issue): string {
  const where = issue.keyPath ? ` ${issue.keyPath}:` : '';
  return `${issue.file}:${issue.line}:${issue.column}: ${issue.severity} [${issue.rule}]${where} ${issue.message}`;
}
