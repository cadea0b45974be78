// Links into the "AlpaSim Runtime" Grafana dashboard, one helper for every place that shows one. AlpaSim's own
// dashboard file (the one its start-prometheus-grafana.sh provisions) has no uid, so Grafana gives it a random
// one at provisioning: a `/d/<uid>/` link cannot resolve there. Grafana's slug route `/dashboard/db/<slug>`
// redirects to the dashboard of that title, keeping the query string, so the same link opens AlpaSim's
// dashboard and ours (same title), with the run's variables and time range.
import { DASHBOARD_CATALOG } from '../catalog/facts.js';

export interface DashboardRef {
  /** null when the dashboard file sets none (AlpaSim's): link by slug. */
  uid: string | null;
  title: string;
}

export interface RunVariables {
  runName: string;
  runUuid?: string | null;
}

/** Epoch milliseconds; `toMs` null means "now". */
export interface TimeRange {
  fromMs: number;
  toMs: number | null;
}

/** AlpaSim's dashboard as its repository ships it (generated catalogue). */
export const ALPASIM_DASHBOARD: DashboardRef = { uid: DASHBOARD_CATALOG.uid, title: DASHBOARD_CATALOG.title };

/** Grafana's slug of a title: lower case, runs of other characters as one dash. */
export function dashboardSlug(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * The dashboard URL for one run: `var-run_name` (and `var-run_uuid` when known), `from`/`to` from the range
 * (default: the last 6 hours). Links by uid only when the dashboard has a fixed one.
 */
export function grafanaDashboardUrl(
  base: string,
  run: RunVariables,
  range?: TimeRange | null,
  dashboard: DashboardRef = ALPASIM_DASHBOARD,
): string {
  const params = new URLSearchParams({ 'var-run_name': run.runName });
  if (run.runUuid) params.set('var-run_uuid', run.runUuid);
  params.set('from', String(range?.fromMs ?? 'now-6h'));
  params.set('to', String(range?.toMs ?? 'now'));
  const slug = dashboardSlug(dashboard.title);
  const path = dashboard.uid ? `d/${encodeURIComponent(dashboard.uid)}/${slug}` : `dashboard/db/${slug}`;
  return `${base.replace(/\/+$/, '')}/${path}?${params.toString()}`;
}
