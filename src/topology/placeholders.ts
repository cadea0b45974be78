// Values `topo setup` writes for a team to replace: anything holding TODO, example.org or
// PLACEHOLDER. `topo validate` warns about each one left (clusters.yaml validates as written, so a
// team can commit it early); `topo doctor` fails on them (a cluster cannot work with them).
import { formatKeyPath, type Issue, type PathSegment } from './issues.js';
import type { LoadedYaml } from './yaml.js';

export const PLACEHOLDER = /TODO|example\.org|PLACEHOLDER/;

/** Every string value under `under` (default: the whole file) that still holds a placeholder. */
export function placeholderIssues(
  loaded: LoadedYaml,
  under: PathSegment[] = [],
  severity: Issue['severity'] = 'warning',
): Issue[] {
  const issues: Issue[] = [];
  const walk = (value: unknown, path: PathSegment[]) => {
    if (typeof value === 'string') {
      if (!PLACEHOLDER.test(value)) return;
      const keyPath = formatKeyPath(path);
      issues.push({
        rule: 'placeholder',
        severity,
        file: loaded.file,
        ...loaded.locate(path),
        keyPath,
        message: `\`${keyPath}\` still holds the value \`topo setup\` left to replace (\`${value}\`): write your cluster's value there (docs/adopting.md, step 2)`,
      });
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, [...path, i]);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(v, [...path, k]);
    }
  };
  let node: unknown = loaded.value;
  for (const seg of under) node = (node as Record<string | number, unknown> | undefined)?.[seg];
  walk(node, under);
  return issues;
}
