import { Argument, InvalidArgumentError, type Command } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import * as z from 'zod';
import { KubeManifestInputError, type KubeObject } from '../../shared/kube/index.js';
import {
  controlPlaneRbac,
  k6LoadJob,
  k6ScriptConfigMap,
  k6WarmupJob,
  parseInput,
  vllmDeployment,
  vllmService,
  vllmServiceMonitor,
  vllmServiceUrl,
} from '../../shared/kube/manifests/index.js';
import { ampTriggerAuthentication, scaledObject } from '../../shared/keda/index.js';
import { CliFileInvalidError } from '../errors.js';
import { printJson } from '../options.js';
import { readStructuredObject } from '../readFile.js';

/**
 * The input of `render k6`: the fields both Jobs share at the top, the warmup Job's own fields under `warmup`, and,
 * when `load` is given, one load-step Job with `load`'s fields (at least `rate`).
 */
const k6RenderSchema = z.looseObject({
  namespace: z.string().optional(),
  scriptConfigMap: z.string().optional(),
  targetUrl: z.string().optional(),
  warmup: z.record(z.string(), z.unknown()).optional(),
  load: z.record(z.string(), z.unknown()).optional(),
});

function renderK6(input: unknown): KubeObject[] {
  const { warmup, load, ...common } = parseInput(k6RenderSchema, input, 'k6');
  const namespace = common.namespace ?? 'default';
  const shared = {
    ...common,
    namespace,
    targetUrl: common.targetUrl ?? vllmServiceUrl({ namespace }),
  };
  return [
    k6ScriptConfigMap({ namespace, ...(common.scriptConfigMap === undefined ? {} : { name: common.scriptConfigMap }) }),
    k6WarmupJob({ ...shared, ...warmup } as never),
    ...(load === undefined ? [] : [k6LoadJob({ ...shared, ...load } as never)]),
  ];
}

/** What `render` can print, and the generator behind each. */
export const RENDER_KINDS = {
  deployment: { describe: 'the vLLM Deployment', render: (input: unknown) => [vllmDeployment(input as never)] },
  service: { describe: 'the vLLM Service', render: (input: unknown) => [vllmService(input as never)] },
  servicemonitor: { describe: 'the ServiceMonitor', render: (input: unknown) => [vllmServiceMonitor(input as never)] },
  scaledobject: { describe: 'the KEDA ScaledObject', render: (input: unknown) => [scaledObject(input as never)] },
  triggerauth: {
    describe: 'the KEDA TriggerAuthentication for AMP',
    render: (input: unknown) => [ampTriggerAuthentication(input as never)],
  },
  rbac: {
    describe: 'the control plane RBAC: read-only ClusterRole, calibration Roles per namespace',
    render: (input: unknown) => controlPlaneRbac(input as never),
  },
  k6: { describe: 'the k6 script ConfigMap and Jobs', render: renderK6 },
} as const satisfies Record<string, { describe: string; render: (input: unknown) => KubeObject[] }>;

export type RenderKind = keyof typeof RENDER_KINDS;

/** The objects of `kind` for `input`, as YAML documents separated by `---`. */
export function renderManifests(kind: RenderKind, input: unknown): string {
  return RENDER_KINDS[kind]
    .render(input)
    .map((object) => stringifyYaml(object, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join('---\n');
}

/**
 * Applies `--set` options to `input`: `a.b=v` sets `input.a.b`; the value is read as YAML (numbers, booleans,
 * `null`, `[a, b]`); `\.` keeps a dot inside a key (`nodeSelector.karpenter\.sh/nodepool=gpu`).
 */
export function applySetOptions(input: Record<string, unknown>, sets: readonly string[]): Record<string, unknown> {
  const result = structuredClone(input);
  for (const set of sets) {
    const equals = set.indexOf('=');
    if (equals <= 0) throw new InvalidArgumentError(`--set ${JSON.stringify(set)}: expected key=value`);
    const path = set
      .slice(0, equals)
      .split(/(?<!\\)\./)
      .map((key) => key.replace(/\\\./g, '.'));
    if (path.some((key) => key === ''))
      throw new InvalidArgumentError(`--set ${JSON.stringify(set)}: the key has an empty part`);
    const text = set.slice(equals + 1);
    let value: unknown;
    try {
      value = parseYaml(text);
    } catch {
      value = text;
    }
    let node: Record<string, unknown> = result;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[path.at(-1) ?? ''] = value;
  }
  return result;
}

/** Reads a YAML or JSON input file into an object; one line naming --input, the file, line and column. */
export async function readInputFile(path: string): Promise<Record<string, unknown>> {
  try {
    return await readStructuredObject('--input', path);
  } catch (error) {
    if (!(error instanceof CliFileInvalidError)) throw error;
    const at = error.position === undefined ? '' : `:${error.position.line}:${error.position.column}`;
    throw new KubeManifestInputError('render', [{ path: '--input', message: `${path}${at}: ${error.reason}` }]);
  }
}

/** `vllm-pilot render <kind>`: prints Kubernetes manifests for the product's objects. */
export function registerRenderCommand(program: Command): void {
  const kinds = Object.keys(RENDER_KINDS) as RenderKind[];
  program
    .command('render')
    .description('print the Kubernetes manifests of vllm-eks-pilot as YAML (pipe to `kubectl apply -f -`)')
    .addArgument(new Argument('<kind>', 'what to render').choices(kinds))
    .option('--input <file>', 'input fields from a YAML or JSON file')
    .option(
      '--set <key=value>',
      'set one input field, e.g. --set maxModelLen=8192 (repeatable; wins over --input)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--json', 'print a JSON array instead of YAML')
    .addHelpText(
      'after',
      [
        '',
        'Kinds:',
        ...kinds.map((k) => `  ${k.padEnd(16)}${RENDER_KINDS[k].describe}`),
        '',
        'Required inputs: deployment, service, servicemonitor: model, maxModelLen; scaledobject: model,',
        'ampWorkspaceUrl, region; k6: model (add `load: {rate: 40}` for a load-step Job); rbac: none',
        "(namespaces: the calibration targets' namespaces, default `default`: --set namespaces=team-a,team-b).",
        'Examples:',
        '  vllm-pilot render deployment --set model=mistralai/Ministral-8B-Instruct-2410 --set maxModelLen=8192',
        '  vllm-pilot render scaledobject --set model=mistralai/Ministral-8B-Instruct-2410 --set region=us-east-2 \\',
        '      --set ampWorkspaceUrl=https://aps-workspaces.us-east-2.amazonaws.com/workspaces/ws-b226cc2a-a446-46a9-933a-ac50479a5568/ \\',
        '      | kubectl --context arn:aws:eks:us-east-2:123456789012:cluster/ai-eks apply -f -   # your cluster',
        '',
      ].join('\n'),
    )
    .action(async (kind: RenderKind, opts: { input?: string; set: string[]; json?: boolean }) => {
      const fromFile = opts.input === undefined ? {} : await readInputFile(opts.input);
      const input = applySetOptions(fromFile, opts.set);
      if (opts.json) return printJson(RENDER_KINDS[kind].render(input));
      process.stdout.write(renderManifests(kind, input));
    });
}
