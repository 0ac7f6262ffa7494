import { describe, fromCatalog, LEGENDS } from './panels.js';
import { GRAFANA_UNITS, type DashboardSpec } from './types.js';

/**
 * Tier 3 of the monitoring guide (section 3): the GPUs (DCGM exporter, one series per GPU UUID) and the Pods'
 * containers (kubelet cAdvisor). GPU utilisation has no threshold on purpose: 30-50 % is normal for vLLM's
 * memory-bound continuous batching, so "red when busy" would mislead.
 */
export const TIER3_GPU: DashboardSpec = {
  uid: 'vllm-eks-pilot-tier3-gpu',
  title: 'vLLM / Tier 3: GPU and containers',
  tier: 3,
  description:
    "GPUs and containers of one model's Pods (monitoring guide, Tier 3): DCGM utilisation, framebuffer, power, " +
    'ECC errors, and container CPU and memory.',
  rows: [
    {
      title: 'GPU compute',
      panels: [
        {
          title: 'GPU utilization',
          description: describe('gpu_utilization'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('gpu_utilization', LEGENDS.gpu)],
          min: 0,
          max: 100,
        },
        {
          title: 'GPU memory bandwidth utilization',
          description: describe('gpu_memory_copy_utilization'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('gpu_memory_copy_utilization', LEGENDS.gpu)],
          min: 0,
          max: 100,
        },
      ],
    },
    {
      title: 'GPU memory',
      panels: [
        {
          title: 'GPU framebuffer used (percent)',
          description: describe('gpu_fb_used_percent'),
          kind: 'gauge',
          unit: GRAFANA_UNITS.percent,
          queries: [fromCatalog('gpu_fb_used_percent', LEGENDS.gpu)],
          // The VLLMGPUMemoryCritical alert fires above 95 %.
          thresholds: [
            { value: 90, color: 'orange' },
            { value: 95, color: 'red' },
          ],
          min: 0,
          max: 100,
          width: 8,
        },
        {
          title: 'GPU framebuffer used and free',
          description: `${describe('gpu_fb_used')} ${describe('gpu_fb_free')}`,
          kind: 'timeseries',
          unit: GRAFANA_UNITS.mebibytes,
          queries: [
            fromCatalog('gpu_fb_used', `used ${LEGENDS.gpu}`),
            fromCatalog('gpu_fb_free', `free ${LEGENDS.gpu}`),
          ],
          min: 0,
          width: 16,
        },
      ],
    },
    {
      title: 'GPU power and health',
      panels: [
        {
          title: 'GPU power draw',
          description: describe('gpu_power'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.watts,
          queries: [fromCatalog('gpu_power', LEGENDS.gpu)],
          min: 0,
        },
        {
          title: 'GPU single-bit ECC errors (volatile)',
          description: describe('gpu_ecc_sbe_volatile'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.count,
          queries: [fromCatalog('gpu_ecc_sbe_volatile', LEGENDS.gpu)],
          thresholds: [{ value: 1, color: 'orange' }],
          min: 0,
          optional: true,
        },
      ],
    },
    {
      title: 'Containers',
      panels: [
        {
          title: 'Container CPU',
          description: `${describe('container_cpu_cores')} CPU is no scaling signal for vLLM: use queue depth.`,
          kind: 'timeseries',
          unit: GRAFANA_UNITS.cores,
          queries: [fromCatalog('container_cpu_cores', LEGENDS.pod)],
          min: 0,
        },
        {
          title: 'Container memory working set',
          description: describe('container_memory_working_set'),
          kind: 'timeseries',
          unit: GRAFANA_UNITS.bytes,
          queries: [fromCatalog('container_memory_working_set', LEGENDS.pod)],
          min: 0,
        },
      ],
    },
  ],
};
