/**
 * The scheduled functions as the deployed stack defines them: each one's schedule, whether it runs and its memory,
 * read from serverless.yml and the stack builder it loads (infra/serverless/stack.ts), with `params.default`
 * (or the parameters given) in place of `${param:...}`. The cost bench prices these, not copies of them.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildStack, type BuiltStack } from '../infra/serverless/stack.js';
import { BenchError } from './errors.js';
import { PRICE_REGION } from './prices.js';

/** The scheduled functions the cost bench prices, by serverless.yml key. */
export const SCHEDULED_FUNCTIONS = [
  'metricsCollector',
  'alertEvaluator',
  'preflight',
  'driftDetector',
  'calibrationSweepLeases',
] as const;
export type ScheduledFunction = (typeof SCHEDULED_FUNCTIONS)[number];

export interface StackFunction {
  name: ScheduledFunction;
  schedule: string;
  enabled: boolean;
  memoryMb: number;
  timeoutS: number;
}

type Json = Record<string, unknown>;
const STACK_JS = /^\$\{file\(infra\/serverless\/osls\/stack\.js\):([\w.]+)\}$/;

/** `${param:x}`, `${self:service}`, `${sls:stage}` (dev) and `${self:provider.region}` (the priced region), replaced. */
function resolveVariables(value: unknown, params: Record<string, string>, service: string): unknown {
  if (typeof value === 'string') {
    const param = /^\$\{param:([\w.]+)\}$/.exec(value);
    if (param !== null) {
      const resolved = resolveVariables(params[param[1] as string], params, service);
      if (resolved === undefined) throw new BenchError(`serverless.yml: no value for ${value}`);
      return resolved;
    }
    if (value === '${self:service}') return service;
    if (value === '${sls:stage}') return 'dev';
    if (value === '${self:provider.region}') return PRICE_REGION;
    return value;
  }
  if (Array.isArray(value)) return value.map((item) => resolveVariables(item, params, service));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveVariables(item, params, service)]),
    );
  return value;
}

/** A `${file(.../stack.js):a.b}` value from the built stack; other values as they are. */
function fromStack(value: unknown, stack: BuiltStack): unknown {
  const match = typeof value === 'string' ? STACK_JS.exec(value) : null;
  if (match === null) return value;
  let at: unknown = stack;
  for (const key of (match[1] as string).split('.')) at = (at as Json | undefined)?.[key];
  if (at === undefined) throw new BenchError(`serverless.yml: the stack builder has no ${match[1] as string}`);
  return at;
}

/**
 * Reads serverless.yml under `root` and the stack it builds with `params` over `params.default`. Throws BenchError
 * when a scheduled function is missing or has no schedule.
 */
export async function readStackFunctions(root: string, params: Record<string, string> = {}): Promise<StackFunction[]> {
  const text = await readFile(join(root, 'serverless.yml'), 'utf8');
  // CloudFormation's short tags (!Ref, !GetAtt) mean nothing here: keep their text.
  const config = parse(text, {
    customTags: ['Ref', 'GetAtt', 'Sub'].map((name) => ({ tag: `!${name}`, resolve: (source: string) => source })),
  }) as Json;
  const service = String(config.service);
  const defaults = (config.params as { default: Record<string, string> }).default;
  const allParams = { ...defaults, ...params };
  const custom = config.custom as { stack: unknown };
  const stack = buildStack(resolveVariables(custom.stack, allParams, service));
  const provider = config.provider as { memorySize: number };

  const declared: Record<string, Json> = {};
  for (const group of config.functions as unknown[]) {
    const entries = fromStack(group, stack);
    if (entries !== null && typeof entries === 'object') Object.assign(declared, entries);
  }
  return SCHEDULED_FUNCTIONS.map((name) => {
    const fn = declared[name];
    if (fn === undefined) throw new BenchError(`serverless.yml declares no function ${name}`);
    const events = (fn.events as Json[] | undefined) ?? [];
    const event = events.find((e) => 'schedule' in e)?.schedule;
    if (event === undefined) throw new BenchError(`serverless.yml: ${name} has no schedule event`);
    const rule = typeof event === 'string' ? { rate: event } : (event as Json);
    const schedule = fromStack(rule.rate, stack);
    const enabled = rule.enabled === undefined ? true : fromStack(rule.enabled, stack);
    if (typeof schedule !== 'string') throw new BenchError(`serverless.yml: ${name}'s schedule is not a string`);
    return {
      name,
      schedule,
      enabled: enabled === true || enabled === 'true',
      memoryMb: Number(fn.memorySize ?? provider.memorySize),
      timeoutS: Number(fn.timeout),
    };
  });
}
