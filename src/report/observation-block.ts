// The sticky comment's hidden, machine-readable block: the monitor writes the candidate's
// observation (verdict + stable metrics) into it and the record action reads it back.
import { migrateObservation } from '../analysis/stored.js';
import type { CandidateObservation } from '../types/generated/metrics.js';

const OPEN = '<!-- topo:observation v1';
const CLOSE = '-->';

/** Renders the observation as an HTML comment GitHub does not display. */
export function renderObservationBlock(observation: CandidateObservation): string {
  // JSON never contains a raw `>` after this escape, so `-->` cannot end the comment early.
  const json = JSON.stringify(observation).replace(/>/g, '\\u003e');
  return `${OPEN}\n${json}\n${CLOSE}`;
}

/**
 * Finds and parses the block in a comment body (an older one migrated: src/analysis/stored.ts);
 * undefined when absent or unreadable.
 */
export function parseObservationBlock(body: string): CandidateObservation | undefined {
  const start = body.lastIndexOf(OPEN);
  if (start < 0) return undefined;
  const end = body.indexOf(CLOSE, start + OPEN.length);
  if (end < 0) return undefined;
  try {
    const value = migrateObservation(
      JSON.parse(body.slice(start + OPEN.length, end).trim()),
    ) as CandidateObservation;
    return value && typeof value === 'object' && typeof value.run_name === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
