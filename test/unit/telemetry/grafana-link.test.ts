// Grafana links (issue 14.8): AlpaSim's dashboard file has no uid, so a `/d/<uid>/` link 404s on the Grafana
// its start-prometheus-grafana.sh provisions. The link goes by slug, which both dashboards share, and carries
// the run's variables (which both dashboards define) and time range.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_CATALOG } from '../../../src/catalog/facts.js';
import { ALPASIM_DASHBOARD, dashboardSlug, grafanaDashboardUrl } from '../../../src/telemetry/grafana.js';

const ours = JSON.parse(
  readFileSync(
    join(import.meta.dirname, '../../../telemetry/grafana/dashboards/alpasim-runtime.json'),
    'utf8',
  ),
) as { uid: string; title: string; templating: { list: { name: string }[] } };

describe('grafanaDashboardUrl', () => {
  it("links AlpaSim's dashboard by slug, since its file has no uid", () => {
    expect(DASHBOARD_CATALOG.uid).toBeNull();
    const url = new URL(
      grafanaDashboardUrl(
        'http://g:3003/',
        { runName: 'topo-e-c-0123abcd', runUuid: 'u-1' },
        {
          fromMs: 1000,
          toMs: 2000,
        },
      ),
    );
    expect(url.pathname).toBe('/dashboard/db/alpasim-runtime');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      'var-run_name': 'topo-e-c-0123abcd',
      'var-run_uuid': 'u-1',
      from: '1000',
      to: '2000',
    });
  });

  it('resolves on ours too: same title (slug), and both define the run variables it sets', () => {
    expect(dashboardSlug(ours.title)).toBe(dashboardSlug(ALPASIM_DASHBOARD.title));
    const ourVars = ours.templating.list.map((v) => v.name);
    for (const v of ['run_name', 'run_uuid']) {
      expect(DASHBOARD_CATALOG.variables).toContain(v);
      expect(ourVars).toContain(v);
    }
  });

  it('links by uid when the dashboard has one, and defaults to the last 6 hours until now', () => {
    expect(
      grafanaDashboardUrl('http://g', { runName: 'r' }, null, { uid: ours.uid, title: ours.title }),
    ).toBe('http://g/d/alpasim-runtime/alpasim-runtime?var-run_name=r&from=now-6h&to=now');
    expect(grafanaDashboardUrl('http://g', { runName: 'r' }, { fromMs: 5, toMs: null })).toContain(
      'from=5&to=now',
    );
  });

  it('escapes run names in the query', () => {
    expect(grafanaDashboardUrl('http://g', { runName: 'a&b=c' })).toContain('var-run_name=a%26b%3Dc');
  });
});
