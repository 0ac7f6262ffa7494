import { describe, expect, it } from '@jest/globals';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { parse } from 'yaml';
import { KubeManifestInputError } from '../kube/index.js';
import { scaledObject, scaledObjectQueries } from './scaledObjectManifest.js';

/**
 * The ScaledObject of the EKS user guide, "Autoscale AI inference with HPA and KEDA", Step 2
 * (awsdocs/amazon-eks-user-guide latest/ug/ml/ml-inference-autoscaling-hpa-keda.adoc), verbatim.
 */
const GUIDE = parse(`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: vllm-inference-app
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: vllm-inference-app
  minReplicaCount: 1
  maxReplicaCount: 5
  advanced:
    horizontalPodAutoscalerConfig:
      name: vllm-inference-app
      behavior:
        scaleUp:
          stabilizationWindowSeconds: 30
          policies:
          - type: Pods
            value: 2
            periodSeconds: 60
          selectPolicy: Max
        scaleDown:
          stabilizationWindowSeconds: 300
          policies:
          - type: Pods
            value: 1
            periodSeconds: 120
          selectPolicy: Min
  triggers:
  - type: prometheus
    metricType: AverageValue
    metadata:
      serverAddress: http://kube-prometheus-stack-prometheus.monitoring.svc:9090
      query: sum(vllm:num_requests_waiting) or vector(0)
      threshold: "25"
      activationThreshold: "1"
  - type: prometheus
    metricType: AverageValue
    metadata:
      serverAddress: http://kube-prometheus-stack-prometheus.monitoring.svc:9090
      query: histogram_quantile(0.95, sum(rate(vllm:e2e_request_latency_seconds_bucket[1m])) by (le)) or vector(0)
      threshold: "5"
`) as { metadata: { name: string }; spec: { triggers: Array<{ metadata: Record<string, string> }> } };

const AMP = 'https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-12345678-abcd-efgh-ijkl-1234567890ab';
const minimal = { model: 'ministral', ampWorkspaceUrl: AMP, region: 'us-east-2' };

type Trigger = {
  type: string;
  metricType: string;
  authenticationRef?: { name: string };
  metadata: Record<string, string>;
};
type Shape = { metadata: { name: string; namespace: string }; spec: { triggers: Trigger[] } & Record<string, unknown> };

function render(input: Parameters<typeof scaledObject>[0]): Shape {
  const object = scaledObject(input);
  new ScaledObject(object as never).validate();
  return object as unknown as Shape;
}

/**
 * Drops the fields where the product differs from the guide on purpose (the AMP connection, the queries and the
 * latency trigger's metricType).
 */
function withoutIntendedDifferences(object: Shape | typeof GUIDE): unknown {
  const { triggers, ...spec } = object.spec as { triggers: Trigger[] };
  return {
    name: object.metadata.name,
    spec,
    triggers: triggers.map(({ authenticationRef: _ref, metadata, metricType, ...trigger }: Trigger, index) => {
      const { serverAddress: _server, query: _query, awsRegion: _region, ...rest } = metadata;
      return { ...trigger, ...(index === 1 ? {} : { metricType }), metadata: rest };
    }),
  };
}

describe('Function: scaledObject', () => {
  it("matches the guide's ScaledObject field by field, apart from the AMP connection, the scoped queries and the latency trigger's metricType", () => {
    // Act
    const object = render(minimal);

    // Assess
    expect(withoutIntendedDifferences(object)).toEqual(withoutIntendedDifferences(GUIDE));
  });

  it("compares the p95 with its threshold as a whole (metricType Value) and keeps the guide's per-Pod queue (AverageValue)", () => {
    // Act
    const [queue, latency] = render(minimal).spec.triggers;
    const [, guideLatency] = render({ ...minimal, latencyMetricType: 'AverageValue' }).spec.triggers;

    // Assess: both forms validate against KEDA's CRD (render validates).
    expect(queue?.metricType).toBe('AverageValue');
    expect(latency?.metricType).toBe('Value');
    expect(guideLatency?.metricType).toBe('AverageValue');
  });

  it('refuses a latency metricType KEDA does not know, naming the accepted ones', () => {
    // Act
    const attempt = () => scaledObject({ ...minimal, latencyMetricType: 'Utilization' as never });

    // Assess
    expect(attempt).toThrow(KubeManifestInputError);
    expect(attempt).toThrow(/latencyMetricType: "Utilization" is not a metric type; accepted: AverageValue, Value/);
  });

  it('points both triggers at the AMP workspace, signed through the TriggerAuthentication, in its region', () => {
    // Act
    const { triggers } = render(minimal).spec;

    // Assess
    for (const trigger of triggers) {
      expect(trigger.authenticationRef).toEqual({ name: 'keda-trigger-auth-aws-credentials' });
      expect(trigger.metadata).toMatchObject({ serverAddress: AMP, awsRegion: 'us-east-2' });
    }
  });

  it("scopes the guide's queries to the Deployment's namespace, model and Pods", () => {
    // Act
    const [queue, latency] = render(minimal).spec.triggers;

    // Assess
    const matchers = 'namespace="default", model_name="ministral", pod=~"vllm-inference-app-[a-z0-9]+-[a-z0-9]+"';
    expect(queue?.metadata.query).toBe(`sum(vllm:num_requests_waiting{${matchers}}) or vector(0)`);
    expect(latency?.metadata.query).toBe(
      `(histogram_quantile(0.95, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket{${matchers}}[1m])))) > -Inf or vector(0)`,
    );
  });

  it('writes the thresholds it is given (the calibration sets them) as KEDA strings', () => {
    // Act
    const [queue, latency] = render({
      ...minimal,
      queueThreshold: 40,
      queueActivationThreshold: 2,
      latencyThresholdSeconds: 2.5,
    }).spec.triggers;

    // Assess
    expect(queue?.metadata).toMatchObject({ threshold: '40', activationThreshold: '2' });
    expect(latency?.metadata.threshold).toBe('2.5');
  });

  it('trims a pasted AMP query URL to the workspace URL KEDA expects', () => {
    // Act
    const [queue] = render({ ...minimal, ampWorkspaceUrl: `${AMP}/api/v1/query` }).spec.triggers;

    // Assess
    expect(queue?.metadata.serverAddress).toBe(AMP);
  });

  it('sets the polling interval, cooldown and activation threshold it is given', () => {
    // Act
    const object = render({ ...minimal, pollingInterval: 15, cooldownPeriod: 600, queueActivationThreshold: 3 });

    // Assess
    expect(object.spec).toMatchObject({ pollingInterval: 15, cooldownPeriod: 600 });
    expect(object.spec.triggers[0]?.metadata.activationThreshold).toBe('3');
  });

  it('overrides the HPA behavior field by field, keeping the guide’s values for the rest', () => {
    // Act
    const object = render({
      ...minimal,
      behavior: { scaleUp: { pods: 4, stabilizationWindowSeconds: 0 }, scaleDown: { selectPolicy: 'Disabled' } },
    });

    // Assess
    const { advanced } = object.spec as { advanced?: { horizontalPodAutoscalerConfig?: { behavior?: unknown } } };
    const behavior = advanced?.horizontalPodAutoscalerConfig?.behavior;
    expect(behavior).toEqual({
      scaleUp: {
        stabilizationWindowSeconds: 0,
        policies: [{ type: 'Pods', value: 4, periodSeconds: 60 }],
        selectPolicy: 'Max',
      },
      scaleDown: {
        stabilizationWindowSeconds: 300,
        policies: [{ type: 'Pods', value: 1, periodSeconds: 120 }],
        selectPolicy: 'Disabled',
      },
    });
  });

  it('leaves out authenticationRef and awsRegion for a Prometheus that needs no authentication', () => {
    // Act
    const object = render({
      model: 'ministral',
      ampWorkspaceUrl: 'http://127.0.0.1:9090',
      authentication: false,
    });

    // Assess
    for (const trigger of object.spec.triggers) {
      expect(trigger.authenticationRef).toBeUndefined();
      expect(trigger.metadata.awsRegion).toBeUndefined();
      expect(trigger.metadata.serverAddress).toBe('http://127.0.0.1:9090');
    }
  });

  it.each([
    {
      case: 'no AMP workspace URL',
      input: { model: 'm', region: 'us-east-2' },
      message: /ampWorkspaceUrl: is required/,
    },
    { case: 'no region', input: { model: 'm', ampWorkspaceUrl: AMP }, message: /region: is required/ },
    {
      case: 'max below min',
      input: { ...minimal, minReplicaCount: 3, maxReplicaCount: 2 },
      message: /maxReplicaCount: must be >= minReplicaCount \(3\)/,
    },
    {
      case: 'a zero queue threshold',
      input: { ...minimal, queueThreshold: 0 },
      message: /queueThreshold: must be > 0/,
    },
    {
      case: 'a scale-up period the API server refuses',
      input: { ...minimal, behavior: { scaleUp: { periodSeconds: 3601 } } },
      message: /behavior\.scaleUp\.periodSeconds: is too large; accepted: an integer from 1 to 1800/,
    },
    {
      case: 'an unknown select policy',
      input: { ...minimal, behavior: { scaleDown: { selectPolicy: 'Fastest' } } },
      message: /behavior\.scaleDown\.selectPolicy: "Fastest" is not a select policy; accepted: Max, Min, Disabled/,
    },
    {
      case: 'an unknown behavior field',
      input: { ...minimal, behavior: { scaleUp: { percent: 50 } } },
      message: /behavior\.scaleUp/,
    },
    {
      case: 'a cluster without its label',
      input: { ...minimal, cluster: 'prod' },
      message: /clusterLabel: cluster and clusterLabel go together/,
    },
  ])('refuses $case, naming the field', ({ input, message }) => {
    // Act
    const act = () => scaledObject(input as never);

    // Assess
    expect(act).toThrow(KubeManifestInputError);
    expect(act).toThrow(message);
  });
});

describe('Function: scaledObjectQueries', () => {
  it('escapes model names, so a value from configuration cannot change the query', () => {
    // Act
    const { queueDepth } = scaledObjectQueries({
      name: 'vllm-inference-app',
      namespace: 'default',
      model: 'evil"} or vector(1e9) #',
      rateWindow: '1m',
    });

    // Assess
    expect(queueDepth).toContain('model_name="evil\\"} or vector(1e9) #"');
  });

  it('adds the cluster matcher for a workspace shared by clusters', () => {
    // Act
    const { p95Latency } = scaledObjectQueries({
      name: 'a',
      namespace: 'default',
      model: 'm',
      rateWindow: '2m',
      cluster: 'prod-use2',
      clusterLabel: 'cluster',
    });

    // Assess
    expect(p95Latency).toContain('cluster="prod-use2"');
    expect(p95Latency).toContain('[2m]');
  });
});
