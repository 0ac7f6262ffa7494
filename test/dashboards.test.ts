import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { runConstantArrivalLoad, type Twin, twinMetricsSource } from '../sim/harness/index.js';
import {
  ALL_PODS,
  DASHBOARD_SPECS,
  DASHBOARDS,
  VARIABLE_SOURCES,
  dashboardQueries,
  renderQuery,
  type DashboardVariableValues,
} from '../shared/dashboards/index.js';
import { type HttpMetricsSource, VLLM_RENAMED } from '../shared/metrics/index.js';
import { DEMO_SHAPE, startDemoTwin, warmUp } from './helpers/twin.js';

// Every PromQL expression of every dashboard, with the variables Grafana would substitute, runs against the twin's
// real Prometheus through the product's AMP client, on a twin exposing vLLM 0.9's metric names and on one exposing
// the latest names: each must parse and evaluate, and every panel must show data after a short load (quantiles and
// rates need requests in their window). Only the ECC panel may be empty: dcgm-exporter leaves ECC fields off.

jest.setTimeout(120_000);

/** Long enough for the demo's 1 s scrapes to give every rate() many samples, short enough to cover the load. */
const RATE_INTERVAL = '30s';
const LOAD = { rps: 4, durationS: 12 } as const;

const OPTIONAL_PANELS = new Set(
  DASHBOARD_SPECS.flatMap((spec) => spec.rows.flatMap((row) => row.panels))
    .filter((panel) => panel.optional === true)
    .map((panel) => panel.title),
);

const QUERIES = DASHBOARDS.flatMap((dashboard) =>
  dashboardQueries(dashboard).map((query, index) => ({ ...query, dashboard: dashboard.uid, index })),
);

/** Grafana's `label_values(<selector>, <label>)` as PromQL: one series per distinct value of the label. */
function labelValuesQuery(selector: string, label: string): string {
  return `group by (${label}) (${selector})`;
}

describe.each([{ vllmVersion: '0.9' as const }, { vllmVersion: 'latest' as const }])(
  'Dashboards on a twin with vLLM $vllmVersion metric names (real Prometheus, HttpMetricsSource)',
  ({ vllmVersion }) => {
    let twin: Twin;
    let source: HttpMetricsSource;
    let values: DashboardVariableValues;
    /** The answer of every dashboard query, read once after the load. */
    const answers = new Map<string, { series: number } | { error: string }>();

    beforeAll(async () => {
      twin = await startDemoTwin({ vllmVersion, replicas: 2 });
      source = twinMetricsSource(twin.state);
      values = {
        namespace: twin.state.namespace,
        model_name: twin.state.model,
        pod: ALL_PODS,
        __rate_interval: RATE_INTERVAL,
      };
      await warmUp(twin);
      const load = await runConstantArrivalLoad({
        urls: [twin.state.serviceUrl],
        model: twin.state.model,
        ...DEMO_SHAPE,
        ...LOAD,
      });
      if (load.failed > 0)
        throw new Error(`the load had ${load.failed} failed requests: ${JSON.stringify(load.failures)}`);
      for (const query of QUERIES) {
        const key = `${query.dashboard}#${query.index}`;
        try {
          const samples = await source.instant(renderQuery(query.expr, values));
          answers.set(key, { series: samples.length });
        } catch (error) {
          answers.set(key, { error: `${(error as Error).name}: ${(error as Error).message}` });
        }
      }
    }, 120_000);

    afterAll(async () => {
      await twin?.stop();
    });

    it.each(QUERIES)('$dashboard / $panel (query $index) runs without error', ({ dashboard, index, expr }) => {
      // Act
      const answer = answers.get(`${dashboard}#${index}`);

      // Assess
      expect({
        expr,
        answered: answer !== undefined,
        error: answer !== undefined && 'error' in answer ? answer.error : null,
      }).toEqual({
        expr,
        answered: true,
        error: null,
      });
    });

    it.each(QUERIES.filter((query) => !OPTIONAL_PANELS.has(query.panel)))(
      '$dashboard / $panel (query $index) shows data',
      ({ dashboard, index, expr }) => {
        // Act
        const answer = answers.get(`${dashboard}#${index}`);

        // Assess
        expect({ expr, hasData: answer !== undefined && 'series' in answer && answer.series > 0 }).toEqual({
          expr,
          hasData: true,
        });
      },
    );

    it('the only optional panel (ECC errors, off in dcgm-exporter by default) is empty, not failing', () => {
      // Act
      const optional = QUERIES.filter((query) => OPTIONAL_PANELS.has(query.panel)).map((query) =>
        answers.get(`${query.dashboard}#${query.index}`),
      );

      // Assess
      expect(optional).toEqual([{ series: 0 }]);
    });

    it.each(VARIABLE_SOURCES.map((variable) => ({ name: variable.name, variable })))(
      'variable $name lists what the twin serves',
      async ({ variable }) => {
        // Prepare
        const expected: Record<string, string[]> = {
          namespace: [twin.state.namespace],
          model_name: [twin.state.model],
          pod: twin.state.replicas.map((replica) => replica.name).sort(),
        };

        // Act
        const samples = await source.instant(labelValuesQuery(renderQuery(variable.selector, values), variable.name));

        // Assess
        const listed = samples.map((sample) => sample.labels[variable.name] ?? '').sort();
        expect(listed).toEqual(expected[variable.name]);
      },
    );

    it("reads KV-cache usage although the twin exposes only one of vLLM's two names for it", async () => {
      // Prepare
      const exposed = vllmVersion === '0.9' ? VLLM_RENAMED.kvCacheUsage.legacy : VLLM_RENAMED.kvCacheUsage.current;
      const missing = vllmVersion === '0.9' ? VLLM_RENAMED.kvCacheUsage.current : VLLM_RENAMED.kvCacheUsage.legacy;
      const panel = QUERIES.find((query) => query.panel === 'KV-cache usage per Pod');
      const only = (name: string) => source.instant(`${name}{namespace="${twin.state.namespace}"}`);

      // Act
      const [withExposed, withMissing, dashboard] = await Promise.all([
        only(exposed),
        only(missing),
        source.instant(renderQuery(panel?.expr ?? '', values)),
      ]);

      // Assess
      expect(withMissing).toHaveLength(0);
      expect(withExposed).toHaveLength(twin.state.replicas.length);
      expect(dashboard).toHaveLength(twin.state.replicas.length);
    });

    it('selecting one Pod narrows the per-Pod panels to that Pod', async () => {
      // Prepare
      const [first] = twin.state.replicas.map((replica) => replica.name).sort();
      const perPod = QUERIES.find((query) => query.panel === 'Queue depth per Pod');

      // Act
      const samples = await source.instant(renderQuery(perPod?.expr ?? '', { ...values, pod: first ?? '' }));

      // Assess
      expect(samples.map((sample) => sample.labels.pod)).toEqual([first]);
    });
  },
);
