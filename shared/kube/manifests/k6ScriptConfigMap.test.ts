import { describe, expect, it } from '@jest/globals';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { k6Script } from './k6Script.js';
import { k6ScriptConfigMap } from './k6ScriptConfigMap.js';

describe('Function: k6ScriptConfigMap', () => {
  it('holds the k6 script under load.js', () => {
    // Act
    const configMap = k6ScriptConfigMap({ namespace: 'llm' });

    // Assess
    new ConfigMap(configMap).validate();
    expect(configMap).toMatchObject({
      metadata: { name: 'vllm-pilot-k6-script', namespace: 'llm' },
      data: { 'load.js': k6Script() },
    });
  });
});
