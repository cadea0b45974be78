// Options shared by several commands, declared once so their help and parsing agree everywhere.
import type { OptionSpec } from '../args.js';

export const JSON_OPTION: OptionSpec = {
  name: 'json',
  type: 'boolean',
  description: 'print JSON (with schema_version; schema in schemas/cli/) instead of text',
};

export const CLUSTERS_OPTION: OptionSpec = {
  name: 'clusters',
  type: 'string',
  value: 'FILE',
  description: 'the clusters file',
  default: 'topologies/clusters.yaml',
  env: 'TOPO_CLUSTERS_FILE',
};

export const TOPOLOGIES_OPTION: OptionSpec = {
  name: 'topologies',
  type: 'string',
  value: 'DIR',
  description: 'folder of <experiment>/experiment.yaml',
  default: 'topologies',
};

export const CLUSTER_OPTION: OptionSpec = {
  name: 'cluster',
  type: 'string',
  value: 'NAME',
  description: 'cluster of the clusters file to use',
  default: "the experiment's cluster",
};

export const ALLOW_UNMEASURED_MEMORY_OPTION: OptionSpec = {
  name: 'allow-unmeasured-memory',
  type: 'boolean',
  description:
    "accept a GPU predicted above its memory while the model is clusters.yaml's estimate (a warning, not an error; as allow_unmeasured_memory in experiment.yaml)",
};
