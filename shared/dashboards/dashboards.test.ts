import { describe, expect, it } from '@jest/globals';
import { VLLM_RENAMED } from '../metrics/index.js';
import { DASHBOARD_SPECS, DASHBOARDS, dashboardQueries, type GrafanaDashboard } from './dashboards.js';

const VARIABLE = /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g;

function variablesOf(dashboard: GrafanaDashboard): Set<string> {
  return new Set(['__rate_interval', ...dashboard.templating.list.map((variable) => variable.name)]);
}

describe('Constant: DASHBOARDS', () => {
  it('holds one dashboard per tier of the monitoring guide, each with a unique uid that is a DNS-1123 label', () => {
    // Assess
    expect(DASHBOARD_SPECS.map((spec) => spec.tier)).toEqual([1, 2, 3]);
    const uids = DASHBOARDS.map((dashboard) => dashboard.uid);
    expect(new Set(uids).size).toBe(3);
    for (const uid of uids) expect(uid).toMatch(/^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$/);
  });

  it.each(DASHBOARDS.map((dashboard) => ({ uid: dashboard.uid, dashboard })))(
    '$uid: schemaVersion 39+, a Prometheus data source variable, and namespace and model_name variables',
    ({ dashboard }) => {
      // Assess
      expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
      const byName = new Map(dashboard.templating.list.map((variable) => [variable.name, variable]));
      expect(byName.get('datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
      expect(byName.get('namespace')).toMatchObject({ type: 'query' });
      expect(byName.get('model_name')).toMatchObject({ type: 'query' });
      expect(byName.get('model_name')?.query).toContain('namespace="$namespace"');
    },
  );

  it.each(DASHBOARDS.map((dashboard) => ({ uid: dashboard.uid, dashboard })))(
    '$uid: every query goes to the chosen data source and uses only variables the dashboard defines',
    ({ dashboard }) => {
      // Prepare
      const defined = variablesOf(dashboard);

      // Act
      const panels = dashboard.panels.filter((panel) => panel.type !== 'row');

      // Assess
      expect(panels.length).toBeGreaterThan(0);
      for (const panel of panels) {
        expect({ panel: panel.title, datasource: panel.datasource }).toEqual({
          panel: panel.title,
          datasource: { type: 'prometheus', uid: '${datasource}' },
        });
        for (const target of panel.targets ?? []) {
          expect(target.datasource.uid).toBe('${datasource}');
          const used = [...target.expr.matchAll(VARIABLE)].map((match) => match[1] ?? '');
          expect({ panel: panel.title, undefined: used.filter((name) => !defined.has(name)) }).toEqual({
            panel: panel.title,
            undefined: [],
          });
        }
      }
    },
  );

  it.each(DASHBOARDS.map((dashboard) => ({ uid: dashboard.uid, dashboard })))(
    '$uid: every query is filtered by the selected namespace (and vLLM queries by the selected model)',
    ({ dashboard }) => {
      // Act
      const queries = dashboardQueries(dashboard);

      // Assess
      for (const { panel, expr } of queries) {
        expect({ panel, namespaced: expr.includes('namespace="$namespace"') }).toEqual({ panel, namespaced: true });
        if (expr.includes('vllm:'))
          expect({ panel, byModel: expr.includes('model_name="$model_name"') }).toEqual({ panel, byModel: true });
      }
    },
  );

  it.each(DASHBOARDS.map((dashboard) => ({ uid: dashboard.uid, dashboard })))(
    '$uid: panels have unique ids and sit inside the 24-column grid without overlapping',
    ({ dashboard }) => {
      // Prepare
      const cells = new Set<string>();
      const overlaps: string[] = [];

      // Act
      for (const panel of dashboard.panels) {
        const { x, y, w, h } = panel.gridPos;
        expect(x + w).toBeLessThanOrEqual(24);
        for (let column = x; column < x + w; column++)
          for (let row = y; row < y + h; row++) {
            const cell = `${column},${row}`;
            if (cells.has(cell)) overlaps.push(`${panel.title} at ${cell}`);
            cells.add(cell);
          }
      }

      // Assess
      expect(overlaps).toEqual([]);
      expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
    },
  );

  it.each([
    { case: 'KV-cache usage', concept: 'kvCacheUsage' as const },
    { case: 'inter-token latency', concept: 'interTokenLatency' as const },
    { case: 'prefix-cache hits', concept: 'prefixCacheHits' as const },
  ])("asks for both of vLLM's names of $case, so panels work before and after the rename", ({ concept }) => {
    // Prepare
    const { current, legacy } = VLLM_RENAMED[concept];

    // Act
    const exprs = DASHBOARDS.flatMap(dashboardQueries).map((query) => query.expr);
    const withCurrent = exprs.filter((expr) => expr.includes(current));

    // Assess
    expect(withCurrent.length).toBeGreaterThan(0);
    for (const expr of exprs) {
      const count = (name: string) => expr.split(name).length - 1;
      // `<current> or <legacy>` on each series: as many legacy selectors as current ones.
      expect({ expr, legacy: count(legacy) }).toEqual({ expr, legacy: count(current) });
      if (count(current) > 0)
        expect(expr).toMatch(new RegExp(`${current}[^{]*\\{[^}]*\\}(\\[[^\\]]*\\]\\))? or (rate\\()?${legacy}`));
    }
  });

  it("shows the guide's KV-cache levels (80 % attention, 95 % act) on its KV-cache panels", () => {
    // Act
    const kvPanels = DASHBOARDS.flatMap((dashboard) => dashboard.panels).filter((panel) =>
      panel.title.startsWith('KV-cache usage'),
    );

    // Assess
    expect(kvPanels).toHaveLength(2);
    for (const panel of kvPanels) {
      const steps = (panel.fieldConfig?.defaults.thresholds as { steps: Array<{ value: number | null }> }).steps;
      expect(steps.map((step) => step.value)).toEqual([null, 80, 95]);
    }
  });
});

describe('Function: dashboardQueries', () => {
  it("lists every target's expression with its panel title, in panel order", () => {
    // Act
    const queries = dashboardQueries(DASHBOARDS[0] as GrafanaDashboard);

    // Assess
    expect(queries[0]?.panel).toBe('Queue depth (requests waiting)');
    const latency = queries.filter((query) => query.panel === 'End-to-end request latency');
    expect(latency.map((query) => /histogram_quantile\(([\d.]+),/.exec(query.expr)?.[1])).toEqual([
      '0.5',
      '0.95',
      '0.99',
    ]);
  });

  it("includes the panels inside a collapsed row (Grafana nests them in the row's own panels)", () => {
    // Prepare
    const base = DASHBOARDS[2] as GrafanaDashboard;
    const [row, ...rest] = base.panels;
    const collapsed: GrafanaDashboard = {
      ...base,
      panels: [{ ...(row as GrafanaDashboard['panels'][number]), collapsed: true, panels: rest }],
    };

    // Act
    const queries = dashboardQueries(collapsed);

    // Assess
    expect(queries).toEqual(dashboardQueries(base));
  });
});
