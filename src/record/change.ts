// The change of a candidate against its parent, as the seed's record writes it: `key: "old -> new"`.
// The diff itself is the topology module's (one way to diff topologies); this only formats it.
import { type Change, topologyDiff, hydraValue as topologyHydraValue } from '../topology/expand.js';
import type { Topology } from '../types/generated/topology.js';

/** A value as a Hydra override writes it, with `unset` for a key the other side does not have. */
export function hydraValue(value: unknown): string {
  return value === undefined ? 'unset' : topologyHydraValue(value);
}

/** Keys whose value differs between parent and candidate (both fully expanded), sorted, as `old -> new`. */
export function topologyChange(
  parent: Topology | null | undefined,
  candidate: Topology | null | undefined,
): Record<string, string> {
  return changeOf(topologyDiff(parent ?? {}, candidate ?? {}));
}

/** A diff (src/topology/expand.ts topologyDiff) as the record writes it, sorted by key. */
export function changeOf(diff: readonly Change[]): Record<string, string> {
  const changes = [...diff].sort((a, b) => a.key.localeCompare(b.key));
  return Object.fromEntries(changes.map((c) => [c.key, `${hydraValue(c.from)} -> ${hydraValue(c.to)}`]));
}

/** One line for a table cell: `key: old -> new; …`, or `baseline` when there is no parent. */
export function describeChange(change: Record<string, string> | undefined, isBaseline: boolean): string {
  const entries = Object.entries(change ?? {});
  if (entries.length === 0) return isBaseline ? 'baseline' : 'no change';
  return entries.map(([k, v]) => `${k}: ${v}`).join('; ');
}
