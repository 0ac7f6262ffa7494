import { describe, expect, it } from '@jest/globals';
import { Service } from 'kubernetes-models/v1/Service';
import { vllmService, vllmServiceUrl } from './vllmService.js';

const minimal = { model: 'ministral', maxModelLen: 8192 };

describe('Function: vllmService', () => {
  it("builds the guide's Service: vllm-inference-svc, port http 8000 to the vLLM Pods", () => {
    // Act
    const service = vllmService(minimal);

    // Assess
    new Service(service as never).validate();
    expect(service).toMatchObject({
      metadata: { name: 'vllm-inference-svc', namespace: 'default' },
      spec: {
        type: 'ClusterIP',
        selector: { app: 'vllm-inference-app' },
        ports: [{ name: 'http', port: 8000, targetPort: 'http', protocol: 'TCP' }],
      },
    });
  });

  it.each([
    { case: 'a name ending in -app', input: { ...minimal, name: 'chat-app' }, expected: 'chat-svc' },
    { case: 'any other name', input: { ...minimal, name: 'chat' }, expected: 'chat-svc' },
    { case: 'an explicit serviceName', input: { ...minimal, serviceName: 'front' }, expected: 'front' },
  ])('names the Service for $case', ({ input, expected }) => {
    // Act
    const service = vllmService(input);

    // Assess
    expect(service.metadata.name).toBe(expected);
  });
});

describe('Function: vllmServiceUrl', () => {
  it('is the in-cluster URL the k6 Jobs call', () => {
    // Act
    const url = vllmServiceUrl({ namespace: 'llm', port: 9000 });

    // Assess
    expect(url).toBe('http://vllm-inference-svc.llm.svc:9000');
  });
});
