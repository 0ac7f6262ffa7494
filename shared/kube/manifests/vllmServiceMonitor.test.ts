import { describe, expect, it } from '@jest/globals';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { vllmService } from './vllmService.js';
import { vllmServiceMonitor } from './vllmServiceMonitor.js';

const minimal = { model: 'ministral', maxModelLen: 8192 };

describe('Function: vllmServiceMonitor', () => {
  it("scrapes the Service's http port at /metrics every 30 s, named like the Deployment as in the guide", () => {
    // Act
    const monitor = vllmServiceMonitor(minimal);

    // Assess
    new ServiceMonitor(monitor as never).validate();
    expect(monitor).toMatchObject({
      apiVersion: 'monitoring.coreos.com/v1',
      metadata: { name: 'vllm-inference-app', namespace: 'default' },
      spec: {
        namespaceSelector: { matchNames: ['default'] },
        endpoints: [{ port: 'http', path: '/metrics', interval: '30s' }],
      },
    });
  });

  it("selects the generated Service by that Service's labels", () => {
    // Act
    const monitor = vllmServiceMonitor(minimal) as { spec: { selector: { matchLabels: Record<string, string> } } };
    const service = vllmService(minimal);

    // Assess
    expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
    expect(service.spec).toMatchObject({ ports: [{ name: 'http' }] });
  });

  it("adds the labels a Prometheus's serviceMonitorSelector asks for", () => {
    // Act
    const monitor = vllmServiceMonitor({ ...minimal, monitorLabels: { release: 'kube-prometheus-stack' } });

    // Assess
    expect(monitor.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', app: 'vllm-inference-app' });
  });
});
