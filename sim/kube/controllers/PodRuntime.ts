import http from 'node:http';
import { K6_EXIT_CODES, runK6 } from '../k6/runK6.js';
import { K6ConfigInvalidError } from '../k6/errors.js';
import { k6PlanFromContainer } from '../k6/k6Plan.js';
import { k6LogLine } from '../k6/k6Output.js';
import { WARMUP_ANNOTATION, WARMUP_REQUEST } from '../../../shared/kube/manifests/index.js';
import { type NodeAgent, startNodeAgent } from '../../dcgm/server.js';
import type { ReplicaIdentity } from '../../vllm/telemetry.js';
import { VllmConfigInvalidError } from '../../vllm/errors.js';
import { startVllmReplica, type VllmReplica } from '../../vllm/server.js';
import { KubeApiNotFoundError } from '../errors.js';
import type { KubeObject } from '../types.js';
import { type ControllerLoop, startControllerLoop } from './controllerLoop.js';
import { WorkloadContainerArgsError, WorkloadPodNotRunningError } from './errors.js';
import { EVENT_TYPES, type EventRecorder } from './events.js';
import { controllerOf, field, keyOf, kubeTime, splitKey } from './meta.js';
import { gpuNode, newGpuNodeName, NODE_FACTS, nodeIp, systemNode } from './nodes.js';
import {
  type ContainerRun,
  type ContainerSpec,
  containersOf,
  isPodTerminal,
  POD_PHASES,
  type PodRunState,
  podStatus,
  unschedulablePodStatus,
} from './podStatus.js';
import { gpuUnschedulableMessage } from './scheduling.js';
import type { Controller, ControllerContext, RunningReplica } from './types.js';
import { isVllmContainer, vllmOverridesFromContainer } from './vllmArgs.js';
import { vllmCrashLines, vllmFatalErrorLines, vllmReadyLines, vllmStartLines, vllmVersionOf } from './vllmLog.js';

const KUBELET = 'kubelet';
/** Once Ready, the readiness probe runs this often (the kubelet's default periodSeconds is 10). */
const READY_PROBE_PERIOD_MS = 5_000;
/** The kubelet's crash back-off: 10 s doubling up to 5 min. */
const CRASH_BACKOFF = { baseMs: 10_000, maxMs: 300_000 } as const;
/** The port vLLM's container listens on in the Pod (the replica itself listens on a loopback port). */
const VLLM_CONTAINER_PORT = 8000;

interface VllmState {
  container: ContainerSpec;
  index: number;
  replica?: VllmReplica;
  ready: boolean;
  loggedReady: boolean;
  createdNode: boolean;
  restarts: number;
  retryDue: boolean;
  prober?: NodeJS.Timeout;
  retryTimer?: NodeJS.Timeout;
  lastProbeMs: number;
  /** Failed readiness probes in a row while Ready (the kubelet waits for failureThreshold of them). */
  failedProbes: number;
  /** The replica whose warmup finished (a restarted container warms up again); `warming` while requests run. */
  warmedReplica?: VllmReplica;
  warming: boolean;
}

interface PodHandle {
  uid: string;
  key: string;
  namespace: string;
  name: string;
  nodeName: string;
  run: PodRunState;
  vllm?: VllmState;
  /** Stops what runs in the Pod (k6 runs); vLLM state is stopped by the runtime itself. */
  stop?: () => Promise<void>;
  /** The loopback URL of k6's REST API while the k6 container runs with `--address` on the Pod's address. */
  k6ApiUrl?: string;
}

/** A vLLM Pod held back by the GPU NodePool's limit: Pending and unbound, tried again on every resync. */
interface WaitingPod {
  uid: string;
  creationTimestamp: string;
  /** When the kubelet first saw it, to order Pods created in the same second. */
  seen: number;
  /** FailedScheduling is recorded, and Karpenter's refusal logged, once per Pod rather than every resync. */
  reported: boolean;
}

export interface PodRuntimeOptions {
  ctx: ControllerContext;
  events: EventRecorder;
  /** Maps in-cluster URLs for k6 (the Services' proxies). */
  resolve: (url: string) => string;
  readinessProbeIntervalMs: number;
}

/**
 * The twin's kubelet (and Karpenter and the scheduler): runs what each Pod's containers describe and writes Pod status.
 * - A container whose image names `vllm` gets a GPU node of its own (a Node object like Karpenter's g6e.4xlarge),
 *   a node agent (dcgm-exporter + cAdvisor) and a vLLM replica configured by the container's args; it is Ready once
 *   the model is loaded and `/health` answers 200. Bad args crash the container (CrashLoopBackOff, with the error in
 *   the log). Deleting the Pod stops the replica and the node agent and terminates the node. With the profile's
 *   `karpenter.gpuLimit`, a Pod that would take the GPU nodes beyond it stays Pending and unbound (PodScheduled False,
 *   Unschedulable) until a GPU node goes away; the Pods waiting longest get the freed GPUs first.
 * - A container whose image is `grafana/k6`, or the product's k6 container (named `k6`, whatever its image: a k6 built
 *   with xk6-sse from a private registry), runs the k6 emulation (sim/kube/k6) and ends Succeeded or Failed.
 * - Any other container just runs (Ready at once), or completes at once when the Pod does not restart
 *   (restartPolicy Never / OnFailure: Job Pods).
 * Pods bound to a Node that no longer exists are deleted, as the Pod garbage collector does.
 */
/** grafana/k6, or the container the product's k6 Jobs name `k6` (k6.image may name any image built with k6). */
function isK6Container(container: { name?: string; image?: string }): boolean {
  return /(^|\/)grafana\/k6([:@]|$)/.test(container.image ?? '') || container.name === 'k6';
}

export class PodRuntime implements Controller {
  readonly #handles = new Map<string, PodHandle>();
  readonly #agents = new Map<string, NodeAgent>();
  readonly #waiting = new Map<string, WaitingPod>();
  #seen = 0;
  readonly #options: PodRuntimeOptions;
  readonly #loop: ControllerLoop;
  readonly #unwatchNodes: () => void;
  #stopping = false;

  constructor(options: PodRuntimeOptions) {
    this.#options = options;
    const { ctx } = options;
    this.#ensureSystemNode();
    this.#unwatchNodes = ctx.store.watch('Node', (event) => {
      if (event.type !== 'DELETED') return;
      this.#collectPodsOf(event.object.metadata.name);
      // One GPU node fewer: the NodePool's limit may let a waiting Pod through now rather than at the next resync.
      for (const key of this.#waiting.keys()) this.#loop.queue.add(key);
    });
    this.#loop = startControllerLoop({
      name: 'kubelet',
      ctx,
      watches: [{ kind: 'Pod', keys: (e) => [keyOf(e.object.metadata)] }],
      resyncKeys: () => [...new Set([...ctx.store.list('Pod').map((p) => keyOf(p.metadata)), ...this.#handles.keys()])],
      reconcile: (key) => this.#reconcile(key),
    });
  }

  /** The loopback URL of a Pod's server: a vLLM replica, or k6's REST API while the run lasts. */
  endpoint(namespace: string, pod: string): string | undefined {
    const handle = this.#handles.get(`${namespace}/${pod}`);
    return handle?.vllm?.replica?.url ?? handle?.k6ApiUrl;
  }

  /**
   * Crashes the vLLM container of a running vLLM Pod, as a fatal engine error does (exit code 1): the replica stops
   * (its connections close, so requests in flight fail), the Pod turns not Ready, and the kubelet starts the container
   * again at once (a first restart has no back-off): restartCount + 1, lastState.terminated, a new startedAt, the model
   * loaded cold and the warmup sent again before the Pod is Ready. The Pod (name, uid, node) stays. Throws
   * WorkloadPodNotRunningError when the Pod runs no vLLM replica (not a vLLM Pod, gone, or still starting).
   */
  crashVllmContainer(namespace: string, pod: string): void {
    const { ctx } = this.#options;
    const key = `${namespace}/${pod}`;
    const handle = this.#handles.get(key);
    const state = handle?.vllm;
    const replica = state?.replica;
    if (handle === undefined || state === undefined || replica === undefined)
      throw new WorkloadPodNotRunningError(namespace, pod);
    const nowMs = ctx.clock.now();
    clearInterval(state.prober);
    state.replica = undefined;
    state.ready = false;
    state.failedProbes = 0;
    state.restarts += 1;
    const run = handle.run.containers[state.index] as ContainerRun;
    this.#setContainer(handle, state.index, {
      state: 'terminated',
      exitCode: 1,
      reason: 'Error',
      startedAtIso: run.current.state === 'running' ? run.current.startedAtIso : kubeTime(nowMs),
      finishedAtIso: kubeTime(nowMs),
    });
    for (const line of vllmFatalErrorLines(nowMs)) ctx.logs.append(namespace, pod, line, state.container.name);
    ctx.log(`kubelet: pod ${key}: container ${state.container.name} exited with code 1 (Error); restarting it`);
    // The status shows the exit now; the container starts again once the old server is closed.
    this.#loop.queue.add(key);
    void replica
      .stop()
      .catch((error: unknown) => {
        ctx.log(
          `kubelet: pod ${key}: stopping the crashed replica: ${error instanceof Error ? error.message : String(error)}`,
        );
      })
      .finally(() => {
        state.retryDue = true;
        this.#loop.queue.add(key);
      });
  }

  /** The node agent's scrape address (`127.0.0.1:PORT`) of a GPU node. */
  nodeAgentAddress(node: string): string | undefined {
    return this.#agents.get(node)?.address;
  }

  /** Every running vLLM replica. */
  replicas(): RunningReplica[] {
    const result: RunningReplica[] = [];
    for (const handle of this.#handles.values()) {
      const replica = handle.vllm?.replica;
      const agent = this.#agents.get(handle.nodeName);
      if (!replica || !agent) continue;
      result.push({
        namespace: handle.namespace,
        pod: handle.name,
        node: handle.nodeName,
        url: replica.url,
        ready: handle.vllm?.ready ?? false,
        vllm: replica,
        nodeAgent: agent,
      });
    }
    return result;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#unwatchNodes();
    await this.#loop.stop();
    for (const handle of [...this.#handles.values()]) await this.#teardown(handle, { keepObjects: true });
    for (const agent of this.#agents.values()) await agent.stop();
    this.#agents.clear();
    this.#waiting.clear();
  }

  async #reconcile(key: string): Promise<void> {
    const { store } = this.#options.ctx;
    const { namespace, name } = splitKey(key);
    const pod = store.get('Pod', namespace, name);
    let handle = this.#handles.get(key);
    if (handle && (!pod || pod.metadata.uid !== handle.uid)) {
      await this.#teardown(handle, { keepObjects: false });
      handle = undefined;
    }
    const waiting = this.#waiting.get(key);
    if (waiting && waiting.uid !== pod?.metadata.uid) this.#waiting.delete(key);
    if (!pod || this.#stopping) return;
    if (!handle) {
      if (isPodTerminal(pod)) return;
      const nodeName = containersOf(pod).some(isVllmContainer)
        ? this.#provisionGpuNode(pod)
        : this.#placeOnExistingNode(pod);
      if (nodeName === undefined) {
        this.#keepPending(key);
        return;
      }
      handle = await this.#start(pod, nodeName);
      this.#handles.set(key, handle);
    } else if (handle.vllm?.retryDue) {
      handle.vllm.retryDue = false;
      await this.#startVllmContainer(handle);
    }
    this.#writeStatus(handle);
  }

  async #start(pod: KubeObject, nodeName: string): Promise<PodHandle> {
    const containers = containersOf(pod);
    const vllmIndex = containers.findIndex(isVllmContainer);
    const k6Index = containers.findIndex(isK6Container);
    const nowIso = kubeTime(this.#options.ctx.clock.now());
    this.#bind(pod, nodeName);
    const handle: PodHandle = {
      uid: pod.metadata.uid as string,
      key: keyOf(pod.metadata),
      namespace: pod.metadata.namespace as string,
      name: pod.metadata.name,
      nodeName,
      run: {
        phase: POD_PHASES.running,
        nodeName,
        hostIp: nodeIp(nodeName),
        startTimeIso: nowIso,
        containers: containers.map((c, i) => this.#plainContainer(pod, c, i !== vllmIndex && i !== k6Index, nowIso)),
      },
    };
    for (const c of containers) {
      this.#options.events.record(
        pod,
        EVENT_TYPES.normal,
        'Pulled',
        `Container image "${c.image ?? ''}" already present on machine`,
        KUBELET,
      );
      this.#options.events.record(pod, EVENT_TYPES.normal, 'Created', `Created container: ${c.name}`, KUBELET);
      this.#options.events.record(pod, EVENT_TYPES.normal, 'Started', `Started container ${c.name}`, KUBELET);
    }
    if (vllmIndex >= 0) {
      handle.vllm = {
        container: containers[vllmIndex] as ContainerSpec,
        index: vllmIndex,
        ready: false,
        loggedReady: false,
        // A Karpenter node of the GPU NodePool goes away with its GPU Pod (consolidation of an empty node).
        createdNode:
          this.#options.ctx.store.get('Node', undefined, nodeName)?.metadata.labels?.['karpenter.sh/nodepool'] ===
          NODE_FACTS.gpuNodePool,
        restarts: 0,
        retryDue: false,
        lastProbeMs: 0,
        failedProbes: 0,
        warming: false,
      };
      await this.#startVllmContainer(handle);
    } else if (k6Index >= 0) {
      this.#startK6(handle, pod, containers[k6Index] as ContainerSpec, k6Index);
    }
    this.#updatePhase(handle);
    return handle;
  }

  /** A container that is not vLLM or k6: running and ready, or already completed when the Pod does not restart. */
  #plainContainer(pod: KubeObject, container: ContainerSpec, plain: boolean, nowIso: string): ContainerRun {
    const restartPolicy = field<string>(pod, 'spec', 'restartPolicy') ?? 'Always';
    const base = { name: container.name, image: container.image ?? '', restartCount: 0 };
    if (plain && restartPolicy !== 'Always')
      return {
        ...base,
        current: { state: 'terminated', exitCode: 0, reason: 'Completed', startedAtIso: nowIso, finishedAtIso: nowIso },
      };
    return {
      ...base,
      current: plain
        ? { state: 'running', startedAtIso: nowIso, ready: true }
        : { state: 'waiting', reason: 'ContainerCreating' },
    };
  }

  /**
   * Karpenter: a vLLM Pod (it asks for a GPU) gets a fresh GPU node, unless it is already bound to one; undefined
   * when the NodePool's GPU limit leaves no room for it (yet).
   */
  #provisionGpuNode(pod: KubeObject): string | undefined {
    const { store, region, profile } = this.#options.ctx;
    const bound = field<string>(pod, 'spec', 'nodeName');
    if (bound && store.get('Node', undefined, bound)) return bound;
    if (!this.#gpuWithinLimit(pod)) return undefined;
    this.#waiting.delete(keyOf(pod.metadata));
    const name = newGpuNodeName(region, (n) => store.get('Node', undefined, n) !== undefined);
    const node = store.create(gpuNode(name, region, profile));
    this.#options.ctx.log(
      `karpenter: launched ${NODE_FACTS.gpuInstanceType} node ${name} (NodePool ${NODE_FACTS.gpuNodePool}) for pending GPU Pod ${keyOf(pod.metadata)}`,
    );
    this.#options.events.record(
      node,
      EVENT_TYPES.normal,
      'Launched',
      `Status condition transitioned, Type: Launched, Status: True`,
      'karpenter',
    );
    return name;
  }

  /**
   * Whether one more GPU node stays within the NodePool's `limits: nvidia.com/gpu` (one GPU per node), the GPUs left
   * going to the Pods waiting longest: by creationTimestamp, then by when the kubelet first saw them.
   */
  #gpuWithinLimit(pod: KubeObject): boolean {
    const { store, profile } = this.#options.ctx;
    const limit = profile.karpenter?.gpuLimit;
    if (limit === undefined) return true;
    const key = keyOf(pod.metadata);
    if (!this.#waiting.has(key))
      this.#waiting.set(key, {
        uid: pod.metadata.uid as string,
        creationTimestamp: pod.metadata.creationTimestamp ?? '',
        seen: this.#seen++,
        reported: false,
      });
    const free = limit - this.#gpuNodes().length;
    const queue = [...this.#waiting]
      .filter(([k, w]) => {
        const { namespace, name } = splitKey(k);
        return store.get('Pod', namespace, name)?.metadata.uid === w.uid;
      })
      .sort(([, a], [, b]) => a.creationTimestamp.localeCompare(b.creationTimestamp) || a.seen - b.seen)
      .map(([k]) => k);
    return queue.indexOf(key) < free;
  }

  #gpuNodes(): KubeObject[] {
    return this.#options.ctx.store.list('Node', {
      selector: { matchLabels: { 'karpenter.sh/nodepool': NODE_FACTS.gpuNodePool } },
    });
  }

  /**
   * A vLLM Pod the NodePool's limit holds back stays Pending and unbound, with the scheduler's verdict in its status;
   * the first time, the scheduler's FailedScheduling event and Karpenter's refusal in the log.
   */
  #keepPending(key: string): void {
    const { ctx, events } = this.#options;
    const { namespace, name } = splitKey(key);
    const pod = ctx.store.get('Pod', namespace, name);
    const waiting = this.#waiting.get(key);
    if (!pod || !waiting) return;
    const message = this.#unschedulableMessage(pod);
    ctx.store.update(
      { ...pod, status: unschedulablePodStatus(pod, message, kubeTime(ctx.clock.now())) },
      { subresource: 'status' },
    );
    if (waiting.reported) return;
    waiting.reported = true;
    ctx.log(
      `karpenter: could not schedule pod ${key}: all available instance types exceed limits for nodepool "${NODE_FACTS.gpuNodePool}" (limits nvidia.com/gpu: ${ctx.profile.karpenter?.gpuLimit}; ${this.#gpuNodes().length} GPU node(s) up)`,
    );
    events.record(pod, EVENT_TYPES.warning, 'FailedScheduling', message, 'default-scheduler');
  }

  /** Why the scheduler finds no node for a vLLM Pod: every node's GPU is taken, or it has none. */
  #unschedulableMessage(pod: KubeObject): string {
    const { store } = this.#options.ctx;
    const gpuPods = store.list('Pod').filter((p) => !isPodTerminal(p) && containersOf(p).some(isVllmContainer));
    const nodes = store.list('Node').map((node) => {
      const gpusInUse = gpuPods.filter((p) => field(p, 'spec', 'nodeName') === node.metadata.name).length;
      // A GPU node whose Pod is gone is about to be terminated; Karpenter taints such a node first.
      const terminating = gpusInUse === 0 && node.metadata.labels?.['karpenter.sh/nodepool'] === NODE_FACTS.gpuNodePool;
      const taints = [...(field<unknown[]>(node, 'spec', 'taints') ?? []), NODE_FACTS.disruptedTaint];
      return { node: terminating ? { ...node, spec: { ...(node.spec as object), taints } } : node, gpusInUse };
    });
    return gpuUnschedulableMessage(pod.spec, nodes);
  }

  /** Pods without a GPU run on the node they are bound to (DaemonSet Pods), else on the system node. */
  #placeOnExistingNode(pod: KubeObject): string {
    const bound = field<string>(pod, 'spec', 'nodeName');
    if (bound) return bound;
    return this.#ensureSystemNode();
  }

  #ensureSystemNode(): string {
    const { store, region } = this.#options.ctx;
    const name = NODE_FACTS.systemNodeName(region);
    if (!store.get('Node', undefined, name)) store.create(systemNode(region));
    return name;
  }

  #bind(pod: KubeObject, nodeName: string): void {
    const { store } = this.#options.ctx;
    const fresh = store.get('Pod', pod.metadata.namespace, pod.metadata.name);
    if (!fresh || field(fresh, 'spec', 'nodeName') === nodeName) return;
    store.update({ ...fresh, spec: { ...(fresh.spec as object), nodeName } });
    this.#options.events.record(
      fresh,
      EVENT_TYPES.normal,
      'Scheduled',
      `Successfully assigned ${keyOf(fresh.metadata)} to ${nodeName}`,
      'default-scheduler',
    );
  }

  async #startVllmContainer(handle: PodHandle): Promise<void> {
    const { ctx, events } = this.#options;
    const state = handle.vllm as VllmState;
    const pod = ctx.store.get('Pod', handle.namespace, handle.name);
    if (!pod) return;
    const container = state.container;
    const image = container.image ?? '';
    const append = (line: string) => ctx.logs.append(handle.namespace, handle.name, line, container.name);
    try {
      const overrides = vllmOverridesFromContainer(handle.name, container);
      const model = overrides.servedModelName ?? ctx.profile.model;
      for (const line of vllmStartLines(ctx.clock.now(), vllmVersionOf(image, ctx.profile), model, overrides))
        append(line);
      const identity: ReplicaIdentity = {
        pod: handle.name,
        namespace: handle.namespace,
        deployment: this.#workloadName(pod),
        container: container.name,
        node: handle.nodeName,
        gpuIndex: 0,
        gpuUuid: `GPU-${handle.uid}`,
        // One GPU per g6e.4xlarge node, always at the same slot.
        pciBusId: '00000000:30:00.0',
      };
      const replica = await startVllmReplica({ profile: ctx.profile, identity, clock: ctx.clock, overrides });
      if (this.#stopping) {
        await replica.stop();
        return;
      }
      let agent = this.#agents.get(handle.nodeName);
      if (agent) agent.attachPod(identity, replica);
      else {
        agent = await startNodeAgent({
          identity,
          gpu: {
            ...ctx.profile.gpu,
            gpuMemoryUtilization: overrides.gpuMemoryUtilization ?? ctx.profile.gpu.gpuMemoryUtilization,
          },
          telemetry: replica,
          clock: ctx.clock,
          image,
        });
        this.#agents.set(handle.nodeName, agent);
      }
      state.replica = replica;
      state.ready = false;
      state.failedProbes = 0;
      state.loggedReady = false;
      const run = handle.run.containers[state.index];
      if (run?.current.state === 'terminated') {
        // A container that ran and exited is started again: its run becomes lastState, and it counts as a restart.
        run.last = run.current;
        run.restartCount += 1;
        events.record(pod, EVENT_TYPES.normal, 'Created', `Created container: ${container.name}`, KUBELET);
        events.record(pod, EVENT_TYPES.normal, 'Started', `Started container ${container.name}`, KUBELET);
      }
      this.#setContainer(handle, state.index, {
        state: 'running',
        startedAtIso: kubeTime(ctx.clock.now()),
        ready: false,
      });
      ctx.log(
        `kubelet: pod ${handle.key}: vLLM replica at ${replica.url} (model ${replica.servedModelName}, max-num-seqs ${replica.engine.config.maxNumSeqs}) on ${handle.nodeName}; ready after the model loads (${ctx.profile.startup.modelLoadSeconds} s)`,
      );
      this.#startProber(handle);
    } catch (error) {
      if (!(error instanceof WorkloadContainerArgsError || error instanceof VllmConfigInvalidError)) throw error;
      for (const line of vllmCrashLines(ctx.clock.now(), error)) append(line);
      const nowIso = kubeTime(ctx.clock.now());
      state.restarts += 1;
      const backoffMs = Math.min(CRASH_BACKOFF.baseMs * 2 ** (state.restarts - 1), CRASH_BACKOFF.maxMs);
      const run = handle.run.containers[state.index] as ContainerRun;
      run.restartCount = state.restarts - 1;
      run.last = {
        state: 'terminated',
        exitCode: error instanceof WorkloadContainerArgsError ? 2 : 1,
        reason: 'Error',
        startedAtIso: nowIso,
        finishedAtIso: nowIso,
      };
      run.current = {
        state: 'waiting',
        reason: 'CrashLoopBackOff',
        message: `back-off ${Math.round(backoffMs / 1000)}s restarting failed container=${container.name} pod=${handle.name}_${handle.namespace}(${handle.uid})`,
      };
      ctx.log(
        `kubelet: pod ${handle.key}: container ${container.name} crashed (${error.message}); restarting in ${backoffMs / 1000} s`,
      );
      events.record(
        pod,
        EVENT_TYPES.warning,
        'BackOff',
        `Back-off restarting failed container ${container.name} in pod ${handle.name}_${handle.namespace}(${handle.uid})`,
        KUBELET,
      );
      state.retryTimer = setTimeout(() => {
        state.retryDue = true;
        this.#loop.queue.add(handle.key);
      }, backoffMs);
      state.retryTimer.unref();
    }
  }

  /** The readiness probe: `GET /health` once the model is loaded; Ready when it answers 200. */
  #startProber(handle: PodHandle): void {
    const { ctx } = this.#options;
    const state = handle.vllm as VllmState;
    let probing = false;
    const probe = async () => {
      const replica = state.replica;
      if (probing || !replica || !replica.engine.isLoaded()) return;
      const nowMs = ctx.clock.now();
      if (state.ready && nowMs - state.lastProbeMs < READY_PROBE_PERIOD_MS) return;
      probing = true;
      state.lastProbeMs = nowMs;
      const healthy = await httpStatus(`${replica.url}/health`).then((s) => s === 200);
      probing = false;
      // The postStart warmup hook of the product's manifest: Ready only after it sent its requests.
      if (healthy && !state.ready && !this.#warmedUp(handle, replica)) return;
      if (state.replica !== replica) return;
      // As the kubelet does: a Ready container turns not Ready only after failureThreshold failed probes in a row
      // (default 3), so one slow answer on a busy node does not take it out of its Service.
      state.failedProbes = healthy ? 0 : state.failedProbes + 1;
      if (!healthy && state.ready && state.failedProbes < failureThreshold(state.container)) return;
      if (healthy === state.ready) return;
      state.ready = healthy;
      if (healthy && !state.loggedReady) {
        state.loggedReady = true;
        const loadSeconds = ctx.profile.startup.modelLoadSeconds;
        for (const line of vllmReadyLines(ctx.clock.now(), replica, loadSeconds, VLLM_CONTAINER_PORT))
          ctx.logs.append(handle.namespace, handle.name, line, state.container.name);
      }
      ctx.log(
        `kubelet: pod ${handle.key}: ${healthy ? 'Ready (model loaded, /health 200)' : 'not Ready (/health failed)'}`,
      );
      const run = handle.run.containers[state.index];
      if (run?.current.state === 'running') run.current = { ...run.current, ready: healthy };
      this.#loop.queue.add(handle.key);
    };
    state.prober = setInterval(() => void probe(), this.#options.readinessProbeIntervalMs);
    state.prober.unref();
  }

  /**
   * Whether the replica has done the warmup its Pod asks for (annotation WARMUP_ANNOTATION = N): N sequential
   * completions to its own server, as the manifest's postStart hook sends them. Starts them on the first call.
   */
  #warmedUp(handle: PodHandle, replica: VllmReplica): boolean {
    const { ctx } = this.#options;
    const state = handle.vllm as VllmState;
    if (state.warmedReplica === replica) return true;
    const pod = ctx.store.get('Pod', handle.namespace, handle.name);
    const requests = Number(pod?.metadata.annotations?.[WARMUP_ANNOTATION] ?? 0);
    if (!Number.isInteger(requests) || requests <= 0) {
      state.warmedReplica = replica;
      return true;
    }
    if (state.warming) return false;
    state.warming = true;
    const startedMs = ctx.clock.now();
    ctx.log(`kubelet: pod ${handle.key}: postStart warmup: sending ${requests} sequential requests`);
    void sendWarmup(replica, requests)
      .then(() => {
        if (state.replica !== replica) return;
        state.warmedReplica = replica;
        const seconds = ((ctx.clock.now() - startedMs) / 1000).toFixed(1);
        ctx.log(`kubelet: pod ${handle.key}: warmup done (${requests} requests in ${seconds} s)`);
      })
      .catch((error: unknown) => {
        // The replica stopped or failed mid-warmup: the next probe starts over (a postStart hook would be rerun).
        ctx.log(`kubelet: pod ${handle.key}: warmup failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        state.warming = false;
      });
    return false;
  }

  #startK6(handle: PodHandle, pod: KubeObject, container: ContainerSpec, index: number): void {
    const { ctx, resolve } = this.#options;
    const append = (line: string) => ctx.logs.append(handle.namespace, handle.name, line, container.name);
    const startedAtIso = kubeTime(ctx.clock.now());
    const terminate = (exitCode: number, message: string) => {
      this.#setContainer(handle, index, {
        state: 'terminated',
        exitCode,
        reason: exitCode === 0 ? 'Completed' : 'Error',
        ...(exitCode === 0 ? {} : { message }),
        startedAtIso,
        finishedAtIso: kubeTime(ctx.clock.now()),
      });
      this.#updatePhase(handle);
      this.#loop.queue.add(handle.key);
    };
    let plan;
    try {
      plan = k6PlanFromContainer(container);
    } catch (error) {
      if (!(error instanceof K6ConfigInvalidError)) throw error;
      append(k6LogLine(ctx.clock.now(), 'error', error.message));
      ctx.log(`kubelet: pod ${handle.key}: k6 cannot start: ${error.message}`);
      // The script throws while reading __ENV (a script exception); a bad command-line flag is an invalid config.
      terminate(
        error.field.startsWith('env') ? K6_EXIT_CODES.scriptException : K6_EXIT_CODES.invalidConfig,
        error.message,
      );
      return;
    }
    this.#setContainer(handle, index, { state: 'running', startedAtIso, ready: true });
    const controller = new AbortController();
    ctx.log(
      `kubelet: pod ${handle.key}: k6 ${plan.executor} against ${plan.targetUrl} (${plan.executor === 'constant-arrival-rate' ? `${plan.rate}/s for ${plan.durationSeconds} s, maxVUs ${plan.maxVUs}` : `${plan.vus} VUs x ${plan.iterations} iterations`})`,
    );
    const onRestApi = (url: string | undefined) => {
      if (url === undefined) delete handle.k6ApiUrl;
      else handle.k6ApiUrl = url;
    };
    const done = runK6({ plan, resolve, clock: ctx.clock, log: append, signal: controller.signal, onRestApi })
      .then((result) => {
        if (controller.signal.aborted) return;
        ctx.log(`kubelet: pod ${handle.key}: k6 exited ${result.exitCode}: ${result.reason}`);
        terminate(result.exitCode, result.reason);
      })
      .catch((error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        append(k6LogLine(ctx.clock.now(), 'error', message));
        ctx.log(`kubelet: pod ${handle.key}: k6 failed: ${message}`);
        terminate(K6_EXIT_CODES.scriptException, message);
      });
    handle.stop = async () => {
      controller.abort();
      await done;
    };
  }

  #setContainer(handle: PodHandle, index: number, current: ContainerRun['current']): void {
    const run = handle.run.containers[index];
    if (run) run.current = current;
  }

  /** Succeeded / Failed once every container has terminated (by the exit codes), else Running. */
  #updatePhase(handle: PodHandle): void {
    const containers = handle.run.containers;
    const terminated = containers.every((c) => c.current.state === 'terminated');
    if (!terminated) return;
    const failed = containers.some((c) => c.current.state === 'terminated' && c.current.exitCode !== 0);
    handle.run.phase = failed ? POD_PHASES.failed : POD_PHASES.succeeded;
  }

  #writeStatus(handle: PodHandle): void {
    const { store, clock } = this.#options.ctx;
    const pod = store.get('Pod', handle.namespace, handle.name);
    if (!pod || pod.metadata.uid !== handle.uid) return;
    store.update({ ...pod, status: podStatus(pod, handle.run, kubeTime(clock.now())) }, { subresource: 'status' });
  }

  async #teardown(handle: PodHandle, options: { keepObjects: boolean }): Promise<void> {
    const { ctx } = this.#options;
    this.#handles.delete(handle.key);
    await handle.stop?.();
    const state = handle.vllm;
    if (!state) return;
    clearInterval(state.prober);
    clearTimeout(state.retryTimer);
    const agent = this.#agents.get(handle.nodeName);
    // The GPU is exported without Pod labels until the node goes away.
    agent?.detachPod();
    await state.replica?.stop();
    ctx.log(`kubelet: pod ${handle.key}: stopped vLLM replica${state.replica ? ` at ${state.replica.url}` : ''}`);
    if (!state.createdNode || options.keepObjects) return;
    await agent?.stop();
    this.#agents.delete(handle.nodeName);
    try {
      ctx.store.delete('Node', undefined, handle.nodeName);
      ctx.log(`karpenter: node ${handle.nodeName} is empty of GPU Pods; terminated it`);
    } catch (error) {
      if (!(error instanceof KubeApiNotFoundError)) throw error;
    }
  }

  /** The Pod garbage collector: Pods bound to a deleted node are deleted. */
  #collectPodsOf(nodeName: string): void {
    const { store } = this.#options.ctx;
    for (const pod of store.list('Pod')) {
      if (field(pod, 'spec', 'nodeName') !== nodeName) continue;
      try {
        store.delete('Pod', pod.metadata.namespace, pod.metadata.name);
        this.#options.ctx.log(`podgc: deleted Pod ${keyOf(pod.metadata)}: its node ${nodeName} is gone`);
      } catch (error) {
        if (!(error instanceof KubeApiNotFoundError)) throw error;
      }
    }
  }

  /** The Deployment (through its ReplicaSet) or other owner a Pod belongs to, for the replica's identity. */
  #workloadName(pod: KubeObject): string {
    const owner = controllerOf(pod);
    if (owner?.kind !== 'ReplicaSet') return owner?.name ?? pod.metadata.name;
    const rs = this.#options.ctx.store.get('ReplicaSet', pod.metadata.namespace, owner.name);
    return (rs && controllerOf(rs)?.name) ?? owner.name;
  }
}

/** Sends `count` completions one after the other, as the warmup hook does; rejects on the first non-200. */
async function sendWarmup(replica: VllmReplica, count: number): Promise<void> {
  const body = JSON.stringify({
    model: replica.servedModelName,
    prompt: WARMUP_REQUEST.prompt,
    max_tokens: WARMUP_REQUEST.maxTokens,
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < count; i++) {
      const status = await postJson(`${replica.url}/v1/completions`, body, agent);
      if (status !== 200) throw new Error(`warmup request ${i + 1} of ${count} answered ${status}`);
    }
  } finally {
    agent.destroy();
  }
}

function postJson(url: string, body: string, agent: http.Agent): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        timeout: 30_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** The status code of a GET (0 when it fails), without keeping a connection open. */
function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 2_000, headers: { connection: 'close' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
  });
}

/** The readiness probe's failureThreshold, as the kubelet reads it (Kubernetes' default: 3). */
function failureThreshold(container: ContainerSpec): number {
  const threshold = container.readinessProbe?.failureThreshold;
  return typeof threshold === 'number' && Number.isInteger(threshold) && threshold >= 1 ? threshold : 3;
}
