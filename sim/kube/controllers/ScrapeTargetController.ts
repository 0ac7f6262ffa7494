import type { TargetGroups } from '../../prometheus/scrapeConfig.js';
import type { Kind } from '../types.js';
import { computeScrapeTargets, type ScrapeWorld } from './scrapeTargets.js';
import type { Controller, ControllerContext, ScrapeTargetSink } from './types.js';

const WATCHED: readonly Kind[] = ['Pod', 'Service', 'ServiceMonitor', 'DaemonSet', 'Node'];

export interface ScrapeTargetControllerOptions {
  ctx: ControllerContext;
  sink: ScrapeTargetSink;
  debounceMs: number;
  podAddress: ScrapeWorld['podAddress'];
  nodeAgentAddress: ScrapeWorld['nodeAgentAddress'];
}

/**
 * The Prometheus Operator's part: whenever Pods, Services, ServiceMonitors, DaemonSets or Nodes change (and on every
 * resync), recompute the scrape targets after a short quiet period and hand them to Prometheus when they differ from
 * what it has. Pushes are serialised; a failed push is retried on the next change or resync.
 */
export class ScrapeTargetController implements Controller {
  readonly #options: ScrapeTargetControllerOptions;
  readonly #unsubscribes: Array<() => void>;
  readonly #resync: NodeJS.Timeout;
  #timer: NodeJS.Timeout | undefined;
  #pushed: string | undefined;
  #chain: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: ScrapeTargetControllerOptions) {
    this.#options = options;
    const { store } = options.ctx;
    this.#unsubscribes = WATCHED.map((kind) => store.watch(kind, () => this.#schedule()));
    this.#resync = setInterval(() => this.#schedule(), options.ctx.resyncIntervalMs);
    this.#resync.unref();
    this.#schedule();
  }

  /** The targets the current world calls for. */
  current(): Required<TargetGroups> {
    const { store } = this.#options.ctx;
    return computeScrapeTargets({
      pods: store.list('Pod'),
      services: store.list('Service'),
      serviceMonitors: store.list('ServiceMonitor'),
      nodes: store.list('Node'),
      podAddress: this.#options.podAddress,
      nodeAgentAddress: this.#options.nodeAgentAddress,
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#resync);
    for (const unsubscribe of this.#unsubscribes) unsubscribe();
    await this.#chain;
  }

  #schedule(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#chain = this.#chain.then(() => this.#push());
    }, this.#options.debounceMs);
    this.#timer.unref();
  }

  async #push(): Promise<void> {
    if (this.#stopped) return;
    const targets = this.current();
    const text = JSON.stringify(targets);
    if (text === this.#pushed) return;
    const { log } = this.#options.ctx;
    try {
      await this.#options.sink.setTargets(targets);
      this.#pushed = text;
      log(
        `prometheus-operator: scrape targets now vllm ${targets.vllm.length}, dcgm-exporter ${targets['dcgm-exporter'].length}, kubelet-cadvisor ${targets['kubelet-cadvisor'].length}`,
      );
    } catch (error) {
      log(
        `prometheus-operator: handing targets to Prometheus failed (${(error as Error).message}); retrying on the next change`,
      );
    }
  }
}
