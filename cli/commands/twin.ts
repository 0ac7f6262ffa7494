import { rm } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { Argument, type Command, InvalidArgumentError, Option } from 'commander';
import type { ActiveFault } from '../../sim/harness/index.js';
import { FAULT_KINDS } from '../../sim/harness/faultKinds.js';
import { readTwinState } from '../../sim/harness/twinState.js';
import { parseCalibrationRequest, requestMixOf } from '../../shared/calibration/index.js';
import { describeLength, isFixed, meanLengths } from '../../shared/load/index.js';
import { CliOptionInvalidError } from '../errors.js';
import { harness } from '../harness.js';
import { readStructuredObject } from '../readFile.js';
import { formatNumber, progressBar, table, writeProgress } from '../output.js';
import { positiveInteger, positiveNumber, positiveNumberList, printJson } from '../options.js';

/** The guide's request shape: a prompt of about 35 tokens and `max_tokens` 100. */
const GUIDE_SHAPE = { promptTokens: 35, maxTokens: 100 } as const;

export function registerTwinCommands(program: Command): void {
  const twin = program
    .command('twin')
    .description('the local twin: simulated vLLM replicas, GPU exporters, a real Prometheus and AWS endpoints');

  twin
    .command('up')
    .description('start the twin and keep it running until Ctrl-C (SIGINT) or SIGTERM')
    .requiredOption('--profile <name|file>', 'a built-in profile (demo, ministral-8b-l40s) or a YAML/JSON file')
    .requiredOption('--state-file <file>', 'where to write the twin state (URLs) once everything is ready')
    .option('--no-install', 'never install Prometheus or Alertmanager, even as root with apt-get')
    .option('--verbose', 'also log every controller decision (Pods, rollouts, scaling, k6 Jobs)')
    .addOption(
      new Option(
        '--alerting-engine <engine>',
        "who evaluates the alert rules, as the stage's alerting.engine: lambda (run `alerts evaluate`) or amp (the twin's AMP ruler and a real Alertmanager; the rules installed at start through client-amp, as the stack's deploy does)",
      )
        .choices(['lambda', 'amp'])
        .default('lambda'),
    )
    .action(
      async (opts: {
        profile: string;
        stateFile: string;
        install: boolean;
        verbose?: boolean;
        alertingEngine: 'lambda' | 'amp';
      }) => {
        const { loadProfile, startTwin, subscribeSlackNotifier, twinAlertInstaller } = await harness();
        const profile = await loadProfile(opts.profile);
        const log = (line: string) => process.stderr.write(`twin: ${line}\n`);
        // Listen before starting: Ctrl-C during a long model load must still stop Prometheus and clean up.
        const stopRequested = new AbortController();
        const onSignal = () => stopRequested.abort();
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        const twinInstance = await startTwin({
          profile,
          stateFile: opts.stateFile,
          allowInstallPrometheus: opts.install,
          log,
          verbose: opts.verbose ?? false,
          signal: stopRequested.signal,
          alerting: { engine: opts.alertingEngine },
        });
        const { state } = twinInstance;
        if (opts.alertingEngine === 'amp') {
          // What the stack's custom resource does on deploy: the rules and the Alertmanager definition, through client-amp.
          const installed = await twinAlertInstaller(state)();
          const outcomes = installed.trigger === 'schedule' ? installed.installed.resources : [];
          for (const outcome of outcomes) log(`AMP ${outcome.resource}: ${outcome.action} (${outcome.reason})`);
        }
        // The deployed stack's subscription: the Slack notifier Lambda posts every alert to the (twin's) Slack webhook.
        subscribeSlackNotifier(twinInstance.sns, state);
        twinInstance.sns.subscribe(state.aws.alertTopicArn, (message) => {
          log(`alert on SNS: ${message.subject ?? ''}`);
        });
        process.stdout.write(
          [
            `Twin "${profile.name}" is ready: EKS cluster ${state.clusterName} with ${state.replicas.length} vLLM replica(s) (vLLM ${state.vllmVersion} metric names).`,
            `  vLLM Service:  ${state.serviceUrl}  (${state.namespace}/${state.service}, OpenAI API under /v1)`,
            `  Prometheus:    ${state.prometheusUrl}`,
            `  Kubernetes:    ${state.kubeApiUrl}  (kubectl --kubeconfig ${state.kubeconfigPath} get pods -A)`,
            `  AWS:           CloudWatch ${state.aws.cloudwatchEndpoint}, EKS ${state.aws.eksEndpoint}`,
            `  Faults:        ${state.controlUrl}/faults  (vllm-pilot twin fault --help)`,
            opts.alertingEngine === 'amp'
              ? `  Alerts:        AMP's ruler (the twin's Prometheus) → Alertmanager → SNS ${state.aws.alertTopicArn} → Slack notifier → the twin's Slack sink`
              : `  Alerts:        SNS ${state.aws.alertTopicArn} → Slack notifier → the twin's Slack sink  (vllm-pilot alerts evaluate --state-file ${opts.stateFile})`,
            `  State file:    ${opts.stateFile}`,
            'Press Ctrl-C to stop.',
            '',
          ].join('\n'),
        );
        if (!stopRequested.signal.aborted)
          await new Promise((resolve) => stopRequested.signal.addEventListener('abort', resolve, { once: true }));
        log('stopping');
        await twinInstance.stop();
        await rm(opts.stateFile, { force: true });
        log('stopped');
      },
    );

  twin
    .command('capacity')
    .description("measure one replica's capacity on the virtual clock (deterministic, takes seconds)")
    .requiredOption('--profile <name|file>', 'a built-in profile or a YAML/JSON file')
    .option(
      '--prompt-tokens <n|distribution>',
      'prompt length: tokens, or a distribution as in a calibration input, e.g. "{distribution: uniform, min: 100, max: 900}" (default 35)',
      lengthOption('--prompt-tokens'),
    )
    .option(
      '--max-tokens <n|distribution>',
      'max_tokens: tokens, or a distribution, e.g. "{distribution: histogram, buckets: [{tokens: 64, weight: 3}, {tokens: 512, weight: 1}]}" (default 100)',
      lengthOption('--max-tokens'),
    )
    .option('--seed <n>', 'seed of the drawn lengths (as request.seed; default 1)', integerOption('--seed'))
    .option(
      '--request <file>',
      "a YAML/JSON file holding a calibration input's `request` (or a whole calibration input); flags override it",
    )
    .option('--at-rps <list>', 'also measure latency at these request rates, e.g. 20,40', positiveNumberList)
    .option('--json', 'print JSON')
    .action(
      async (opts: {
        profile: string;
        promptTokens?: unknown;
        maxTokens?: unknown;
        seed?: number;
        request?: string;
        atRps?: number[];
        json?: boolean;
      }) => {
        const { loadProfile, measureCapacity, measureLatency } = await harness();
        const profile = await loadProfile(opts.profile);
        const fromFile = opts.request === undefined ? {} : await requestOfFile(opts.request);
        const request = parseCalibrationRequest({
          ...fromFile,
          ...(opts.promptTokens === undefined ? {} : { promptTokens: opts.promptTokens }),
          ...(opts.maxTokens === undefined ? {} : { maxTokens: opts.maxTokens }),
          ...(opts.seed === undefined ? {} : { seed: opts.seed }),
        });
        const mix = requestMixOf(request);
        const fixed = isFixed(mix.prompt) && isFixed(mix.output);
        const means = meanLengths(mix);
        // A mix is simulated request by request with the k6 script's sampler (sim/vllm/capacity.ts says why).
        const options = fixed ? {} : { mix };
        const capacity = measureCapacity(profile, means, options);
        const rates = opts.atRps ?? [0.5, 0.8].map((f) => Math.round(capacity.capacityRps * f * 10) / 10);
        const latency = rates.map((rps) => measureLatency(profile, means, rps, 120, options));
        const result = {
          profile: profile.name,
          capacityRps: round(capacity.capacityRps),
          shape: fixed ? means : { promptTokens: round(means.promptTokens), maxTokens: round(means.maxTokens) },
          ...(fixed ? {} : { mix }),
          limitedBy: capacity.limitedBy,
          reason: capacity.reason,
          latency: latency.map((l) => ({
            rps: l.offeredRps,
            achievedRps: round(l.achievedRps),
            p50E2eS: round(l.p50E2eS),
            p95E2eS: round(l.p95E2eS),
            p95TtftS: round(l.p95TtftS),
            meanWaiting: round(l.meanWaiting),
            preemptions: l.preemptions,
          })),
        };
        if (opts.json) return printJson(result);
        const shapeText = fixed
          ? `prompt ${means.promptTokens} tokens, max_tokens ${means.maxTokens}`
          : `prompt ${describeLength(mix.prompt)} tokens, max_tokens ${describeLength(mix.output)}, seed ${mix.seed}`;
        process.stdout.write(
          `Profile ${profile.name}: one replica sustains ${formatNumber(result.capacityRps)} requests/s ` +
            `for ${shapeText} (limited by ${capacity.limitedBy}).\n` +
            `${capacity.reason}\n\n` +
            table(
              ['offered req/s', 'achieved req/s', 'p50 e2e s', 'p95 e2e s', 'p95 TTFT s', 'mean queue'],
              result.latency.map((l) => [l.rps, l.achievedRps, l.p50E2eS, l.p95E2eS, l.p95TtftS, l.meanWaiting]),
            ) +
            '\n',
        );
      },
    );

  twin
    .command('load')
    .description(
      "offer constant-arrival-rate load to the twin's vLLM Service (like k6 constant-arrival-rate) and print a summary",
    )
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .requiredOption('--rps <n>', 'requests per second to offer', positiveNumber)
    .requiredOption('--duration <seconds>', 'how long to offer them', positiveNumber)
    .option('--prompt-tokens <n>', 'prompt length in tokens', positiveInteger, GUIDE_SHAPE.promptTokens)
    .option('--max-tokens <n>', 'max_tokens of every request', positiveInteger, GUIDE_SHAPE.maxTokens)
    .option('--max-vus <n>', 'most requests in flight; more are dropped (k6 maxVUs)', positiveInteger, 500)
    .option('--json', 'print the summary as JSON')
    .action(
      async (opts: {
        stateFile: string;
        rps: number;
        duration: number;
        promptTokens: number;
        maxTokens: number;
        maxVus: number;
        json?: boolean;
      }) => {
        const { runConstantArrivalLoad } = await harness();
        const state = await readTwinState(opts.stateFile);
        const stop = new AbortController();
        process.once('SIGINT', () => stop.abort());
        const summary = await runConstantArrivalLoad({
          urls: [state.serviceUrl],
          model: state.model,
          rps: opts.rps,
          durationS: opts.duration,
          promptTokens: opts.promptTokens,
          maxTokens: opts.maxTokens,
          maxVUs: opts.maxVus,
          signal: stop.signal,
          onProgress: (p) =>
            writeProgress(
              process.stderr,
              progressBar(
                p.elapsedS / p.durationS,
                `${p.started} sent, ${p.completed} done, ${p.failed} failed, ${p.dropped} dropped, ${p.inFlight} in flight`,
              ),
            ),
        });
        writeProgress(process.stderr, progressBar(1, 'done'), true);
        if (opts.json) return printJson(summary);
        const ms = summary.latencyMs;
        process.stdout.write(
          table(
            ['offered req/s', 'achieved req/s', 'sent', 'completed', 'failed', 'dropped', 'p50 ms', 'p95 ms', 'p99 ms'],
            [
              [
                summary.offeredRps,
                summary.achievedRps,
                summary.iterations,
                summary.completed,
                summary.failed,
                summary.droppedIterations,
                ms.p50,
                ms.p95,
                ms.p99,
              ],
            ],
          ) + '\n',
        );
        const causes = Object.entries(summary.failures);
        if (causes.length > 0) process.stdout.write(`failures: ${causes.map(([k, v]) => `${k} x${v}`).join(', ')}\n`);
      },
    );

  registerTwinFaultCommand(twin);
}

/** `twin fault` arguments besides the kind. */
interface FaultOptions {
  stateFile: string;
  pod?: string;
  fraction?: number;
  factor?: number;
  rate?: number;
  waiting?: number;
  seconds?: number;
  json?: boolean;
}

/** The control endpoint refused a request; named after the twin's error (TwinFaultInvalidError, ...). */
class TwinControlRequestError extends Error {
  constructor(
    name: string,
    message: string,
    readonly status: number,
    readonly field: string | undefined,
  ) {
    super(message);
    this.name = name;
  }
}

/** `vllm-pilot twin fault KIND|clear|list`: talks to the running twin's control endpoint (`controlUrl`). */
function registerTwinFaultCommand(twin: Command): void {
  const kinds = FAULT_KINDS.map((kind) => `  ${kind.padEnd(22)}${FAULT_HELP[kind]}`).join('\n');
  twin
    .command('fault')
    .description('inject a fault into one vLLM Pod of a running twin, list the faults, or clear them')
    .addArgument(new Argument('<kind>', 'a fault kind, or clear, or list').choices([...FAULT_KINDS, 'clear', 'list']))
    .requiredOption('--state-file <file>', 'the state file written by `twin up`')
    .option('--pod <name>', 'the Pod (default: the first Ready vLLM Pod by name; with clear: only its faults)')
    .option('--fraction <x>', 'kv-cache-pressure, framebuffer-pressure: the share used, 0-1 (default 0.97)', number)
    .option('--factor <x>', 'slow-decoding: how many times slower each engine step is (default 6)', number)
    .option('--rate <x>', 'preemption-storm: preemptions per second (default 12)', number)
    .option('--waiting <n>', 'queue-flood: requests waiting beyond --max-num-seqs (default 80)', positiveInteger)
    .option(
      '--seconds <x>',
      "amp-outage: how long Prometheus stays frozen; scrape-gap: how long the Pod's /metrics answers 503 (default 30)",
      number,
    )
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      `\nKinds:\n${kinds}\n\nExamples:\n  vllm-pilot twin fault kv-cache-pressure --state-file twin.json --fraction 0.98\n` +
        '  vllm-pilot twin fault clear --state-file twin.json',
    )
    .action(async (kind: string, opts: FaultOptions, command: Command) => {
      const given = (['fraction', 'factor', 'rate', 'waiting', 'seconds'] as const).filter(
        (key) => opts[key] !== undefined,
      );
      if ((kind === 'clear' || kind === 'list') && given.length > 0)
        command.error(`error: ${kind} takes no fault parameters (got --${given.join(', --')})`, {
          code: 'vllm-pilot.fault.usage',
          exitCode: 2,
        });
      const state = await readTwinState(opts.stateFile);
      const faultsUrl = `${state.controlUrl}/faults`;
      if (kind === 'list') {
        const { faults } = await callControl<{ faults: ActiveFault[] }>(faultsUrl, { method: 'GET' });
        if (opts.json) return printJson({ faults });
        process.stdout.write(
          faults.length === 0
            ? 'No faults are active.\n'
            : `${faults.map((f) => `${f.kind} on ${f.pod} since ${new Date(f.onsetMs).toISOString()}: ${f.description}`).join('\n')}\n`,
        );
        return;
      }
      if (kind === 'clear') {
        const query = opts.pod === undefined ? '' : `?pod=${encodeURIComponent(opts.pod)}`;
        const { cleared } = await callControl<{ cleared: ActiveFault[] }>(`${faultsUrl}${query}`, {
          method: 'DELETE',
        });
        if (opts.json) return printJson({ cleared });
        process.stdout.write(
          cleared.length === 0
            ? 'No faults were active.\n'
            : `Cleared ${cleared.length} fault(s): ${cleared.map((f) => `${f.kind} on ${f.pod}`).join(', ')}.\n`,
        );
        return;
      }
      const request: Record<string, unknown> = { kind };
      if (opts.pod !== undefined) request.pod = opts.pod;
      for (const key of ['fraction', 'factor', 'rate', 'waiting', 'seconds'] as const)
        if (opts[key] !== undefined) request[key] = opts[key];
      const { fault } = await callControl<{ fault: ActiveFault }>(faultsUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      if (opts.json) return printJson({ fault });
      process.stdout.write(
        `Injected ${fault.kind} on pod ${fault.pod} at ${new Date(fault.onsetMs).toISOString()}: ${fault.description}.\n` +
          `Clear it with: vllm-pilot twin fault clear --state-file ${opts.stateFile} --pod ${fault.pod}\n`,
      );
    });
}

/** What each kind does, for `--help`. */
const FAULT_HELP: Readonly<Record<(typeof FAULT_KINDS)[number], string>> = {
  'kv-cache-pressure': 'KV-cache blocks taken away (trips VLLMKVCacheFull)',
  'framebuffer-pressure': "the Pod's GPU framebuffer nearly full (trips VLLMGPUMemoryCritical)",
  'slow-decoding': 'every engine step slower (trips VLLMHighLatency)',
  'preemption-storm': 'running sequences preempted at a rate (trips VLLMPreemptionSpike)',
  'queue-flood': 'requests queued beyond --max-num-seqs (trips VLLMHighQueueDepth)',
  'amp-outage': 'every Prometheus process frozen: missed scrapes, hanging queries (a calibration repeats the step)',
  'scrape-gap':
    "the Pod's /metrics answers 503: up = 0, a gap in its series, requests served (a calibration repeats the step)",
  'pod-replace': 'the Pod deleted, a cold replacement started (a calibration repeats the step)',
  'pod-crash': 'the vLLM container crashes and restarts cold in the same Pod (a calibration repeats the step)',
};

/** Calls the control endpoint; a refusal becomes an error named as the twin named it. */
async function callControl<T>(url: string, init: RequestInit): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (cause) {
    const code = (cause as { cause?: { code?: string } }).cause?.code ?? (cause as Error).message;
    throw new TwinControlRequestError(
      'TwinControlUnreachableError',
      `cannot reach the twin's control endpoint ${url} (${code}); is \`vllm-pilot twin up\` still running?`,
      0,
      undefined,
    );
  }
  const body = (await response.json().catch(() => ({}))) as {
    error?: { name?: string; message?: string; field?: string };
  } & T;
  if (!response.ok)
    throw new TwinControlRequestError(
      body.error?.name ?? 'TwinControlRequestError',
      body.error?.message ?? `the control endpoint answered ${response.status}`,
      response.status,
      body.error?.field,
    );
  return body;
}

/** Commander parser for a finite number (the twin checks the range and names the field). */
function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got "${value}"`);
  return n;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** A length flag: a number, or a distribution in YAML/JSON (validated with the calibration input's schema after). */
function lengthOption(flag: string): (value: string) => unknown {
  return (value) => {
    try {
      const parsed = parseYaml(value) as unknown;
      // A bare number keeps the flag's old check and message (an integer >= 1).
      return typeof parsed === 'number' ? positiveInteger(value) : parsed;
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw error;
      throw new InvalidArgumentError(
        `expected a number of tokens or a distribution in YAML/JSON such as "{distribution: uniform, min: 100, max: 900}", got "${value}" (${flag})`,
      );
    }
  };
}

function integerOption(flag: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected an integer, got "${value}" (${flag})`);
    return n;
  };
}

/** The `request` of a calibration input file, or the file itself when it is only a request. */
async function requestOfFile(path: string): Promise<Record<string, unknown>> {
  const object = await readStructuredObject('--request', path);
  const request = 'request' in object ? object['request'] : object;
  if (request === null || typeof request !== 'object' || Array.isArray(request))
    throw new CliOptionInvalidError('--request', path, "a file holding a calibration input's request mapping");
  return request as Record<string, unknown>;
}
