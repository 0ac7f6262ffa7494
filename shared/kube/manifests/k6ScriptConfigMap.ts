import type { IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import * as z from 'zod';
import type { KubeObject } from '../types.js';
import { k6Script, K6_SCRIPT } from './k6Script.js';
import { MANAGED_BY } from './labels.js';
import { parseInput } from './parseInput.js';
import { dns1123Label } from './vllmInput.js';

export const DEFAULT_K6_SCRIPT_CONFIGMAP = 'vllm-pilot-k6-script';

export const k6ScriptConfigMapInputSchema = z.strictObject({
  name: dns1123Label('the ConfigMap name').default(DEFAULT_K6_SCRIPT_CONFIGMAP),
  namespace: dns1123Label('the namespace of the k6 Jobs').default('default'),
});

export type K6ScriptConfigMapInputSpec = z.input<typeof k6ScriptConfigMapInputSchema>;

/** The ConfigMap holding the k6 script (key `load.js`), mounted by the warmup and load Jobs at /scripts. */
export function k6ScriptConfigMap(spec: K6ScriptConfigMapInputSpec = {}): KubeObject {
  const input = parseInput(k6ScriptConfigMapInputSchema, spec, 'k6 script configmap');
  const configMap: IConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: { 'app.kubernetes.io/name': 'k6', ...MANAGED_BY },
    },
    data: { [K6_SCRIPT.key]: k6Script() },
  };
  return configMap as KubeObject;
}
