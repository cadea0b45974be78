/* Generated from topologies/schema/candidate.schema.json by scripts/gen-types.mjs. Do not edit. */
import type {Prediction} from './metrics.js';
import type {Topology} from './topology.js';

/**
 * topologies/<experiment>/<candidate>.yaml: one candidate topology of an experiment.
 */
export interface Candidate {
  /**
   * Candidate name: lowercase letters, digits and dashes, at most 40; equals the file name without .yaml.
   */
  name: string;
  /**
   * The candidate this one changes; null or absent for the baseline.
   */
  parent?: string | null;
  /**
   * Why this candidate exists: the evidence and the expected mechanism.
   */
  hypothesis?: string;
  /**
   * What the candidate should change in the measurements.
   */
  expected_effect?: string;
  /**
   * topo suggest's predicted seconds per rollout for this candidate (kept in the record beside the measured value).
   */
  prediction?: Prediction;
  topology: Topology;
}
