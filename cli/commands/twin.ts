import { rm } from 'node:fs/promises';
import type { Command } from 'commander';
import { runConstantArrivalLoad } from '../../sim/load/constantArrival.js';
import { loadProfile } from '../../sim/twin/loadProfile.js';
import { readTwinState } from '../../sim/twin/stateFile.js';
import { startTwin } from '../../sim/twin/twin.js';
import { measureCapacity, measureLatency } from '../../sim/vllm/capacity.js';
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
    .option('--no-install', 'never install Prometheus, even as root with apt-get')
    .option('--verbose', 'also log every controller decision (Pods, rollouts, scaling, k6 Jobs)')
    .action(async (opts: { profile: string; stateFile: string; install: boolean; verbose?: boolean }) => {
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
      });
      const { state } = twinInstance;
      process.stdout.write(
        [
          `Twin "${profile.name}" is ready: EKS cluster ${state.clusterName} with ${state.replicas.length} vLLM replica(s) (vLLM ${state.vllmVersion} metric names).`,
          `  vLLM Service:  ${state.serviceUrl}  (${state.namespace}/${state.service}, OpenAI API under /v1)`,
          `  Prometheus:    ${state.prometheusUrl}`,
          `  Kubernetes:    ${state.kubeApiUrl}  (kubectl --kubeconfig ${state.kubeconfigPath} get pods -A)`,
          `  AWS:           CloudWatch ${state.aws.cloudwatchEndpoint}, EKS ${state.aws.eksEndpoint}`,
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
    });

  twin
    .command('capacity')
    .description("measure one replica's capacity on the virtual clock (deterministic, takes seconds)")
    .requiredOption('--profile <name|file>', 'a built-in profile or a YAML/JSON file')
    .option('--prompt-tokens <n>', 'prompt length in tokens', positiveInteger, GUIDE_SHAPE.promptTokens)
    .option('--max-tokens <n>', 'max_tokens of every request', positiveInteger, GUIDE_SHAPE.maxTokens)
    .option('--at-rps <list>', 'also measure latency at these request rates, e.g. 20,40', positiveNumberList)
    .option('--json', 'print JSON')
    .action(
      async (opts: { profile: string; promptTokens: number; maxTokens: number; atRps?: number[]; json?: boolean }) => {
        const profile = await loadProfile(opts.profile);
        const shape = { promptTokens: opts.promptTokens, maxTokens: opts.maxTokens };
        const capacity = measureCapacity(profile, shape);
        const rates = opts.atRps ?? [0.5, 0.8].map((f) => Math.round(capacity.capacityRps * f * 10) / 10);
        const latency = rates.map((rps) => measureLatency(profile, shape, rps, 120));
        const result = {
          profile: profile.name,
          capacityRps: round(capacity.capacityRps),
          shape,
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
        process.stdout.write(
          `Profile ${profile.name}: one replica sustains ${formatNumber(result.capacityRps)} requests/s ` +
            `for prompt ${shape.promptTokens} tokens, max_tokens ${shape.maxTokens} (limited by ${capacity.limitedBy}).\n` +
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
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
