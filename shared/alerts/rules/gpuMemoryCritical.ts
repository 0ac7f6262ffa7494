import { aggregate, DCGM, plus, ratio } from '../../metrics/index.js';
import { byLabels, scopedSelector } from './scope.js';
import { defineAlertRule, heldText, type TextParts } from './text.js';

/** " on node X" from dcgm-exporter's `Hostname` (releases up to 4.8.2) or `hostname` (its master since 2026-05). */
function node(p: TextParts): string {
  const text = (host: string) => ` on node ${host}`;
  return p.optional('Hostname', text) + p.optional('hostname', text);
}

/** " (pod ns/name)" when the GPU is allocated to a Pod (the exporter omits the labels otherwise). */
function pod(p: TextParts): string {
  return p.optional('pod', (name) => ` (pod ${p.label('namespace')}/${name})`);
}

// dcgm-exporter labels (render_metrics.go): UUID, gpu, Hostname (hostname on its master), modelName, and the
// namespace/pod the GPU is allocated to. A label a series lacks is simply absent from the result.
const IDENTIFYING_LABELS = ['UUID', 'gpu', 'Hostname', 'hostname', 'modelName', 'namespace', 'pod'] as const;

/**
 * VLLMGPUMemoryCritical: `FB_USED / FB_TOTAL > 95 % for 1 min`, critical (monitoring guide, section 6). DCGM has
 * no total field, so the total is `FB_USED + FB_FREE` (MiB; reserved memory excluded). Per GPU: the UUID is the
 * stable key; `gpu`, the node and the GPU model stay on the alert so a person can find the card.
 */
export const gpuMemoryCritical = defineAlertRule({
  name: 'VLLMGPUMemoryCritical',
  severity: 'critical',
  condition: 'GPU framebuffer `DCGM_FI_DEV_FB_USED / (FB_USED + FB_FREE)` per GPU > 95 %',
  meaning: 'OOM imminent',
  unit: 'ratio',
  defaults: { threshold: 0.95, forSeconds: 60, windowSeconds: 0 },
  identifyingLabels: IDENTIFYING_LABELS,
  valueQuery(scope) {
    const by = byLabels(IDENTIFYING_LABELS, scope);
    // `max by` keeps one series per GPU whatever other labels the scrape added (instance, pci_bus_id, ...).
    const used = aggregate('max', by, scopedSelector(DCGM.fbUsed, scope.dcgm));
    const free = aggregate('max', by, scopedSelector(DCGM.fbFree, scope.dcgm));
    return ratio(used, plus(used, free));
  },
  summaryText: (p) => `GPU memory ${p.value} used on GPU ${p.label('UUID')}${node(p)}${pod(p)}`,
  descriptionText: (p) =>
    `Framebuffer use FB_USED / (FB_USED + FB_FREE) is ${p.value} on GPU ${p.label('gpu')} (${p.label('UUID')}` +
    `${p.optional('modelName', (model) => `, ${model}`)})${node(p)}${pod(p)}, above ${p.threshold}${heldText(p)}. ` +
    'An out-of-memory error is imminent. vLLM pre-allocates --gpu-memory-utilization of the GPU (0.9 by default) at ' +
    'start, so more than that means the setting is too high for the model, another process holds GPU memory, or ' +
    'memory leaks.',
  runbook: [
    '1. Find what uses the GPU: the Pod in the alert, and any other Pod on the node (`kubectl get pods -A -o wide --field-selector spec.nodeName=<node>`).',
    "2. Check the vLLM Pod's --gpu-memory-utilization: the guide recommends 0.85 (the default 0.9 is too high for some models); lower it and restart.",
    '3. Lower --max-model-len if it exceeds the context you need: it reserves KV-cache memory.',
    '4. If a process outside vLLM holds memory (`nvidia-smi` on the node), stop it or cordon and drain the node.',
    '5. Watch for CUDA out-of-memory errors and restarts: `kubectl logs -n <namespace> <pod>`, `kubectl get pods -n <namespace>`.',
  ].join('\n'),
});
