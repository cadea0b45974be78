// The import tiers of src/ and actions/, top to bottom: test/unit/build/structure.test.ts holds the
// code to them and test/unit/docs/architecture-docs.test.ts holds docs/architecture.md's list to them.
/** The tiers, top to bottom; an import may stay in its tier (without a cycle) or go down, never up. */
export const TIERS: readonly (readonly string[])[] = [
  ['cli', 'actions', 'demo', 'site'],
  ['monitor', 'usecases', 'commands', 'doctor', 'setup'],
  ['report', 'record', 'autopilot', 'judge'],
  ['analysis', 'suggest', 'campaign', 'chart', 'sim'],
  // the local GitHub beside the client whose requests it serves (it reads src/github's shapes)
  ['telemetry', 'slurm', 'github', 'lifecycle', 'github-local'],
  ['topology', 'catalog', 'types'],
];
