import { describe, expect, it } from '@jest/globals';
import { grafanaDashboardConfigMaps } from './configMaps.js';
import { DashboardInvalidOptionError } from './errors.js';
import { DASHBOARDS } from './dashboards.js';

describe('Function: grafanaDashboardConfigMaps', () => {
  it("makes one ConfigMap per dashboard in `monitoring`, labelled for Grafana's sidecar", () => {
    // Act
    const configMaps = grafanaDashboardConfigMaps();

    // Assess
    expect(configMaps).toHaveLength(DASHBOARDS.length);
    for (const configMap of configMaps) {
      expect(configMap).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'monitoring' } });
      expect(configMap.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    }
  });

  it('stores each dashboard as `<uid>.json`, the JSON model Grafana loads', () => {
    // Act
    const configMaps = grafanaDashboardConfigMaps();

    // Assess
    const loaded = configMaps.map((configMap) => {
      const data = configMap.data as Record<string, string>;
      const [key, json] = Object.entries(data)[0] ?? ['', '{}'];
      return { key, dashboard: JSON.parse(json) as unknown };
    });
    expect(loaded).toEqual(DASHBOARDS.map((dashboard) => ({ key: `${dashboard.uid}.json`, dashboard })));
  });

  it('puts them in the namespace it is given', () => {
    // Act
    const configMaps = grafanaDashboardConfigMaps({ namespace: 'grafana' });

    // Assess
    expect(configMaps.map((configMap) => configMap.metadata.namespace)).toEqual(['grafana', 'grafana', 'grafana']);
  });

  it.each([
    { case: 'upper case', namespace: 'Monitoring' },
    { case: 'empty', namespace: '' },
    { case: 'a dot', namespace: 'mon.itoring' },
  ])('refuses a namespace that is not a DNS-1123 label ($case), naming the field', ({ namespace }) => {
    // Act / Assess
    expect(() => grafanaDashboardConfigMaps({ namespace })).toThrow(DashboardInvalidOptionError);
    expect(() => grafanaDashboardConfigMaps({ namespace })).toThrow(/^namespace: .*accepted: a DNS-1123 label/);
  });
});
