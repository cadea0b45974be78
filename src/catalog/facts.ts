// Typed access to the catalogues generated from AlpaSim's public repository at a pinned commit
// (scripts/gen-alpasim-catalog.mjs writes src/catalog/generated/*.json; re-run it to refresh).
import configKeys from './generated/config-keys.json';
import dashboard from './generated/dashboard.json';
import metrics from './generated/metrics.json';
import rules from './generated/rules.json';

export interface CatalogSource {
  repo: string;
  commit: string;
  paths: string[];
}

export interface GroupOption {
  package: string;
  defaults?: string[];
  /** Topology keys (dotted path -> value) this option sets. */
  topology: Record<string, unknown>;
}

export interface ConfigCatalog {
  source: CatalogSource;
  base_defaults: string[];
  base_topology: Record<string, unknown>;
  /** Every config key path AlpaSim defines (base config, group files under their package, the schema). */
  keys: string[];
  /** Free-form mappings: `+key=value` may add new keys beneath them. */
  open: string[];
  groups: Record<string, { default: string | null; options: Record<string, GroupOption> }>;
}

export interface MetricFact {
  name: string;
  type: 'counter' | 'gauge' | 'histogram';
  labels: string[];
  label_values?: Record<string, string[]>;
  source: 'runtime' | 'process-exporter' | 'dcgm';
}

export const CONFIG_CATALOG = configKeys as ConfigCatalog;
export const METRIC_CATALOG = metrics as { source: CatalogSource; metrics: MetricFact[] };
export const RULE_CATALOG = rules as {
  source: CatalogSource;
  group: string;
  rules: { record: string; expr: string }[];
};
export const DASHBOARD_CATALOG = dashboard as {
  source: CatalogSource;
  uid: string | null;
  title: string;
  time: { from: string; to: string } | null;
  variables: string[];
};

/** The AlpaSim commit every catalogue was generated from. */
export const ALPASIM_COMMIT = CONFIG_CATALOG.source.commit;

const KEY_SET = new Set(CONFIG_CATALOG.keys);

/** True when `key` (dotted) is a config key AlpaSim defines. */
export function isConfigKey(key: string): boolean {
  return KEY_SET.has(key);
}

/** True when `key` lies beneath a free-form mapping (where `+key=value` may add keys). */
export function isUnderOpenKey(key: string): boolean {
  return CONFIG_CATALOG.open.some((p) => key.startsWith(`${p}.`));
}

/** Config group names (`topology`, `physics`, `exp/presets`, …). */
export function configGroup(name: string) {
  return CONFIG_CATALOG.groups[name];
}

/** Whitespace-insensitive form of a PromQL expression (as the generator stores it). */
export function normaliseExpr(expr: string): string {
  return expr.replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();
}
