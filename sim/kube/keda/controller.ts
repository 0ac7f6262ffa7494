/**
 * The twin's KEDA operator and the HPA controller behind it, acting on the object store in-process.
 *
 * For every ScaledObject (while the `scaledobjects.keda.sh` CRD exists, i.e. KEDA is "installed") it keeps what KEDA
 * keeps: the `autoscaling/v2` HPA (owned by the ScaledObject), the ScaledObject's status (Ready / Active / Fallback,
 * hpaName, originalReplicaCount, lastActiveTime, externalMetricNames), and the target Deployment's `spec.replicas`.
 *
 * Each polling interval it runs every `prometheus` trigger's query against the twin's Prometheus with the product's
 * own AMP client (whatever `serverAddress` says: AMP or an in-cluster Prometheus, the twin has one Prometheus), then
 * KEDA's activation step (0 ↔ N), then one HPA reconcile. On a real cluster the HPA controller reconciles every
 * 15 s on its own and reads the metric from KEDA's metrics server; here both run on KEDA's polling interval, which
 * keeps one clock and one query per trigger per interval.
 *
 * Pause (KEDA v2.20 `controllers/keda/scaledobject_controller.go` reconcileScaledObject and
 * `pkg/scaling/executor/scale_scaledobjects.go` RequestScale): with `autoscaling.keda.sh/paused-replicas: "<n>"` the
 * target is scaled to n, `status.pausedReplicaCount` is n, the HPA is deleted and the scale loop stops (condition
 * Paused True, ScaledObjectPaused); with `autoscaling.keda.sh/paused` true the same without touching the replica
 * count. Removing the annotations sets Paused False (ScaledObjectUnpaused), clears pausedReplicaCount and recreates
 * the HPA. KEDA reaches the paused state over two reconciles (its scale loop scales, the next reconcile deletes the
 * HPA); the twin does both in one. While paused with a count, every poll puts the target back to it (a `kubectl
 * scale` does not stick), which a real KEDA does on its next reconcile of the ScaledObject.
 *
 * Not emulated: fallback, paused-scale-in/out, ScaledJobs, scalers other than prometheus, the finalizer.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../../../shared/clock/index.js';
import { HttpMetricsSource, type InstantSample } from '../../../shared/metrics/index.js';
import type { KubeObject, ObjectStore, WatchEvent } from '../types.js';
import { decideKedaScale, KEDA_DEFAULTS, READY_MESSAGES, type KedaCondition } from './activation.js';
import { KedaError, KedaInvalidScaledObjectError, KedaScaleTargetError } from './errors.js';
import { recordEvent, type EventNote } from './events.js';
import {
  computeHpaReplicas,
  type HpaConditionType,
  type HpaConditionUpdate,
  type HpaHistory,
  type MetricReading,
} from './hpaAlgorithm.js';
import { isTriggerActive, triggerValue, type PrometheusTrigger } from './prometheusTrigger.js';
import {
  buildHpa,
  hpaMinReplicas,
  metricStatus,
  PAUSE_ANNOTATIONS,
  parseScaledObject,
  SCALED_OBJECT_CRD,
  SCALED_OBJECT_LABEL,
  type ParsedScaledObject,
} from './scaledObject.js';

/** Runs one PromQL instant query (the product's MetricsSource.instant, or a fake in unit tests). */
export type TriggerQuery = (query: string, options: { signal: AbortSignal }) => Promise<InstantSample[]>;

export interface KedaControllerOptions {
  store: ObjectStore;
  /** The twin's Prometheus (`http://127.0.0.1:PORT`); every trigger is queried there. */
  prometheusUrl: string;
  /** The region the AMP client signs for (the twin's Prometheus ignores signatures). Default `us-east-2`. */
  region?: string;
  clock: Clock;
  /** Forces every ScaledObject's polling interval (to speed the twin up). */
  pollingIntervalOverrideSeconds?: number;
  /** The interval for a ScaledObject without `pollingInterval`: the profile's keda.pollingIntervalSeconds; default 30. */
  defaultPollingIntervalSeconds?: number;
  /** The HPA tolerance (kube-controller-manager's flag); default 0.1. */
  tolerance?: number;
  /** Default: the product's HttpMetricsSource against `prometheusUrl`, one attempt with a 3 s timeout (as KEDA). */
  query?: TriggerQuery;
  /** Poll on timers (default true). False: only `pollNow()` polls, for tests on a virtual clock. */
  autoPoll?: boolean;
  /** One line per decision. */
  log?: (line: string) => void;
}

export interface KedaController {
  /** Polls every ScaledObject once now and resolves when the polls (and the scaling they cause) are done. */
  pollNow(): Promise<void>;
  /** Stops the timers and watches, aborts queries in flight, and resolves when running polls have finished. */
  stop(): Promise<void>;
}

/** Throwaway credentials: the AMP client signs every request, and the twin's Prometheus ignores the signature. */
const TWIN_SIGNING_CREDENTIALS = { accessKeyId: 'AKIDTWINKEDA', secretAccessKey: 'twin-keda-not-a-secret' } as const;
/** KEDA_HTTP_DEFAULT_TIMEOUT. */
const QUERY_TIMEOUT_MS = 3_000;
const KEDA_COMPONENT = 'keda-operator';
const HPA_COMPONENT = 'horizontal-pod-autoscaler';
const HPA_CONDITION_ORDER: readonly HpaConditionType[] = ['AbleToScale', 'ScalingActive', 'ScalingLimited'];
const KEDA_CONDITION_ORDER = ['Ready', 'Active', 'Fallback', 'Paused'] as const;
const CHECK_FAILED_ACTIVE: KedaCondition = {
  type: 'Active',
  status: 'Unknown',
  reason: 'UnknownState',
  message: 'ScaledObject check failed',
};
const NO_FALLBACK: KedaCondition = {
  type: 'Fallback',
  status: 'False',
  reason: 'NoFallbackFound',
  message: 'No fallbacks are active on this scaled object',
};
/** KEDA's Paused conditions (apis/keda/v1alpha1/condition_types.go, scaledobject_controller.go). */
const PAUSED: KedaCondition = {
  type: 'Paused',
  status: 'True',
  reason: 'ScaledObjectPaused',
  message: 'ScaledObject is paused',
};
const UNPAUSED: KedaCondition = {
  type: 'Paused',
  status: 'False',
  reason: 'ScaledObjectUnpaused',
  message: 'pause annotation removed for ScaledObject',
};
const READY: KedaCondition = {
  type: 'Ready',
  status: 'True',
  reason: 'ScaledObjectReady',
  message: READY_MESSAGES.ready,
};

interface Entry {
  namespace: string;
  name: string;
  uid: string;
  history?: HpaHistory;
  /** The generation the last successful reconcile saw (a spec change sets Ready True again, as KEDA's reconciler). */
  reconciledGeneration?: number;
  timer?: NodeJS.Timeout;
  chain: Promise<void>;
}

interface Reading {
  trigger: PrometheusTrigger;
  value?: number;
  error?: string;
}

interface ScaledObjectStatus {
  conditions?: KedaCondition[];
  hpaName?: string;
  originalReplicaCount?: number;
  lastActiveTime?: string;
  externalMetricNames?: string[];
  pausedReplicaCount?: number;
  [field: string]: unknown;
}

/** Starts the KEDA emulation on `store`; see KedaControllerOptions. */
export function startKedaController(options: KedaControllerOptions): KedaController {
  const { store, clock } = options;
  const log = options.log ?? (() => undefined);
  const autoPoll = options.autoPoll ?? true;
  const aborter = new AbortController();
  const query = options.query ?? defaultQuery(options.prometheusUrl, options.region ?? 'us-east-2', clock);
  const entries = new Map<string, Entry>();
  let stopped = false;
  let reportedNotInstalled = false;

  const unwatchScaledObjects = store.watch('ScaledObject', onScaledObjectEvent);
  const unwatchCrds = store.watch('CustomResourceDefinition', (event) => {
    if (event.object.metadata.name !== SCALED_OBJECT_CRD || event.type !== 'ADDED') return;
    log(`keda: ${SCALED_OBJECT_CRD} installed; managing ScaledObjects`);
    for (const so of store.list('ScaledObject')) track(so, true);
  });
  for (const so of store.list('ScaledObject')) track(so, true);

  return {
    async pollNow() {
      const polls = store.list('ScaledObject').map((so) => enqueue(ensureEntry(so)));
      await Promise.all(polls);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      aborter.abort(new KedaError('the KEDA controller was stopped'));
      unwatchScaledObjects();
      unwatchCrds();
      for (const entry of entries.values()) clearTimeout(entry.timer);
      await Promise.all([...entries.values()].map((entry) => entry.chain));
    },
  };

  // -------------------------------------------------------------------------------------------------------------
  // Bookkeeping and scheduling

  function onScaledObjectEvent(event: WatchEvent): void {
    if (stopped) return;
    const so = event.object;
    const key = keyOf(so);
    if (event.type === 'DELETED') {
      const entry = entries.get(key);
      if (entry && entry.uid === so.metadata.uid) {
        clearTimeout(entry.timer);
        entries.delete(key);
      }
      restoreOriginalReplicas(so);
      return;
    }
    track(so, false);
  }

  /**
   * Makes sure the ScaledObject has an entry and is reconciled now. A new one (or any, with `pollSoon`) is polled at
   * once when polling on timers, as KEDA starts a scale loop with an immediate check.
   */
  function track(so: KubeObject, pollSoon: boolean): void {
    const known = entries.get(keyOf(so));
    const entry = ensureEntry(so);
    if (installed()) reconcileSafely(entry);
    if (autoPoll && (pollSoon || known !== entry)) schedule(entry, 0);
  }

  function ensureEntry(so: KubeObject): Entry {
    const key = keyOf(so);
    const existing = entries.get(key);
    if (existing && existing.uid === so.metadata.uid) return existing;
    if (existing) clearTimeout(existing.timer);
    const entry: Entry = {
      namespace: so.metadata.namespace ?? 'default',
      name: so.metadata.name,
      uid: so.metadata.uid ?? '',
      chain: Promise.resolve(),
    };
    entries.set(key, entry);
    return entry;
  }

  /** Polls after `delayMs`, then every polling interval measured from the start of each poll (as KEDA's loop). */
  function schedule(entry: Entry, delayMs: number): void {
    if (stopped) return;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      const startedMs = performance.now();
      void enqueue(entry).then(() => {
        if (entries.get(`${entry.namespace}/${entry.name}`) !== entry) return;
        const elapsedMs = performance.now() - startedMs;
        schedule(entry, Math.max(0, intervalSeconds(entry) * 1000 - elapsedMs));
      });
    }, delayMs);
    entry.timer.unref();
  }

  /** Serialises work on one ScaledObject: a poll never overlaps another poll of the same object. */
  function enqueue(entry: Entry): Promise<void> {
    entry.chain = entry.chain
      .then(() => poll(entry))
      .catch((error: unknown) => log(`keda: ${entry.namespace}/${entry.name}: poll failed: ${messageOf(error)}`));
    return entry.chain;
  }

  function intervalSeconds(entry: Entry): number {
    if (options.pollingIntervalOverrideSeconds !== undefined) return options.pollingIntervalOverrideSeconds;
    const so = store.get('ScaledObject', entry.namespace, entry.name);
    const own = (so?.spec as { pollingInterval?: unknown } | undefined)?.pollingInterval;
    if (typeof own === 'number' && own >= 1) return own;
    return options.defaultPollingIntervalSeconds ?? KEDA_DEFAULTS.pollingIntervalSeconds;
  }

  function installed(): boolean {
    const present = store.get('CustomResourceDefinition', undefined, SCALED_OBJECT_CRD) !== undefined;
    if (!present && !reportedNotInstalled) {
      reportedNotInstalled = true;
      log(`keda: the ${SCALED_OBJECT_CRD} CRD is absent (KEDA not installed); ScaledObjects are left alone`);
    }
    if (present) reportedNotInstalled = false;
    return present;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Reconcile: label, HPA, status fields (no metric queries)

  function reconcileSafely(entry: Entry): ParsedScaledObject | undefined {
    try {
      return reconcile(entry);
    } catch (error) {
      log(`keda: ${entry.namespace}/${entry.name}: reconcile failed: ${messageOf(error)}`);
      return undefined;
    }
  }

  /** KEDA's ScaledObject reconciler; idempotent, writes only what differs. Returns the parsed object when valid. */
  function reconcile(entry: Entry): ParsedScaledObject | undefined {
    let so = store.get('ScaledObject', entry.namespace, entry.name);
    if (!so || so.metadata.uid !== entry.uid) return undefined;
    if (so.metadata.labels?.[SCALED_OBJECT_LABEL] !== so.metadata.name) {
      so = store.update({
        ...so,
        metadata: {
          ...so.metadata,
          labels: { ...(so.metadata.labels ?? {}), [SCALED_OBJECT_LABEL]: so.metadata.name },
        },
      });
    }
    const status = (so.status ?? {}) as ScaledObjectStatus;
    let parsed: ParsedScaledObject;
    let deployment: KubeObject;
    try {
      parsed = parseScaledObject(so);
      const found = store.get('Deployment', parsed.namespace, parsed.targetName);
      if (!found) throw new KedaScaleTargetError(parsed.namespace, parsed.targetName, "Target resource doesn't exist");
      deployment = found;
    } catch (error) {
      const prefix = checkFailedMessage(error);
      writeScaledObjectStatus(entry, (current) => ({
        ...current,
        conditions: mergeKedaConditions(current.conditions, [
          {
            type: 'Ready',
            status: 'False',
            reason: 'ScaledObjectCheckFailed',
            message: `${prefix}: ${messageOf(error)}`,
          },
          CHECK_FAILED_ACTIVE,
          NO_FALLBACK,
        ]),
      }));
      log(`keda: ${entry.namespace}/${entry.name}: check failed: ${messageOf(error)}`);
      entry.reconciledGeneration = undefined;
      return undefined;
    }

    if (parsed.pause.paused) {
      pause(entry, parsed, deployment, status);
      entry.reconciledGeneration = so.metadata.generation;
      return parsed;
    }

    ensureHpa(so, parsed, status.hpaName);
    const ready = findCondition(status.conditions, 'Ready');
    const specChanged = entry.reconciledGeneration !== so.metadata.generation;
    const readyAgain =
      specChanged || ready === undefined || ready.status === 'Unknown' || ready.reason === 'ScaledObjectCheckFailed';
    const wasPaused = findCondition(status.conditions, 'Paused')?.status === 'True';
    if (wasPaused) log(`keda: ${parsed.namespace}/${parsed.name}: pause annotation removed; autoscaling resumes`);
    const annotations = so.metadata.annotations ?? {};
    // KEDA keeps pausedReplicaCount while any pause annotation is present (checkTargetResourceIsScalable).
    const clearPausedCount = !(
      PAUSE_ANNOTATIONS.pausedReplicas in annotations || PAUSE_ANNOTATIONS.paused in annotations
    );
    writeScaledObjectStatus(entry, (current) => {
      const { pausedReplicaCount: _dropped, ...rest } = current;
      return {
        ...(clearPausedCount ? rest : current),
        ...targetStatus(current, parsed, deployment),
        conditions: mergeKedaConditions(current.conditions, [
          ...(readyAgain ? [READY] : []),
          NO_FALLBACK,
          ...(wasPaused ? [UNPAUSED] : []),
        ]),
      };
    });
    entry.reconciledGeneration = so.metadata.generation;
    return parsed;
  }

  /**
   * The pause branch of KEDA's reconciler: scale to the paused count (if one is given), stop autoscaling by deleting
   * the HPA, and report Paused True. Idempotent: writes only what differs, logs only on the transition.
   */
  function pause(entry: Entry, parsed: ParsedScaledObject, deployment: KubeObject, status: ScaledObjectStatus): void {
    if (!parsed.pause.paused) return;
    const who = `${parsed.namespace}/${parsed.name}`;
    const request = parsed.pause;
    const wasPaused = findCondition(status.conditions, 'Paused')?.status === 'True';
    const before = replicasOf(deployment);
    if (request.replicas !== undefined && before !== request.replicas) {
      setReplicas(parsed, request.replicas);
      log(
        `keda: ${who}: paused (${request.reason}): scaled ${parsed.namespace}/${parsed.targetName} from ${before} to ${request.replicas}`,
      );
    } else if (!wasPaused) {
      log(`keda: ${who}: paused (${request.reason}) at ${before} replicas`);
    }
    const hpaName = status.hpaName ?? parsed.hpaName;
    const hpa = store.get('HorizontalPodAutoscaler', parsed.namespace, hpaName);
    if (hpa?.metadata.ownerReferences?.some((ref) => ref.uid === parsed.uid)) {
      store.delete('HorizontalPodAutoscaler', parsed.namespace, hpaName);
      log(`keda: ${who}: paused: deleted HPA ${hpaName}`);
    }
    // The HPA made on resume is a new one: it starts without recommendations or scale events.
    entry.history = undefined;
    writeScaledObjectStatus(entry, (current) => ({
      ...current,
      ...targetStatus(current, parsed, deployment),
      ...(request.replicas !== undefined ? { pausedReplicaCount: request.replicas } : {}),
      conditions: mergeKedaConditions(current.conditions, [READY, NO_FALLBACK, PAUSED]),
    }));
  }

  /** The status fields KEDA's reconciler records about the scale target and the triggers. */
  function targetStatus(
    current: ScaledObjectStatus,
    parsed: ParsedScaledObject,
    deployment: KubeObject,
  ): ScaledObjectStatus {
    return {
      scaleTargetKind: 'apps/v1.Deployment',
      scaleTargetGVKR: { group: 'apps', kind: 'Deployment', resource: 'deployments', version: 'v1' },
      originalReplicaCount: current.originalReplicaCount ?? replicasOf(deployment),
      externalMetricNames: parsed.triggers.map((trigger) => trigger.metricName),
      triggersTypes: 'prometheus',
      ...(parsed.authenticationNames.length > 0
        ? { authenticationsTypes: [...new Set(parsed.authenticationNames)].join(',') }
        : {}),
      hpaName: parsed.hpaName,
    };
  }

  /** Creates or updates the HPA (and removes the one of a previous name), keeping its status. */
  function ensureHpa(so: KubeObject, parsed: ParsedScaledObject, previousName: string | undefined): void {
    if (previousName && previousName !== parsed.hpaName) {
      const old = store.get('HorizontalPodAutoscaler', parsed.namespace, previousName);
      if (old?.metadata.ownerReferences?.some((ref) => ref.uid === parsed.uid)) {
        store.delete('HorizontalPodAutoscaler', parsed.namespace, previousName);
        log(`keda: ${parsed.namespace}/${parsed.name}: HPA renamed ${previousName} → ${parsed.hpaName}`);
      }
    }
    const desired = buildHpa(so, parsed);
    const existing = store.get('HorizontalPodAutoscaler', parsed.namespace, parsed.hpaName);
    if (!existing) {
      store.create(desired);
      log(`keda: ${parsed.namespace}/${parsed.name}: created HPA ${parsed.hpaName}`);
      return;
    }
    const same =
      isDeepStrictEqual(existing.spec, desired.spec) &&
      isDeepStrictEqual(existing.metadata.labels, desired.metadata.labels) &&
      isDeepStrictEqual(existing.metadata.ownerReferences, desired.metadata.ownerReferences);
    if (!same) {
      store.update({
        ...existing,
        metadata: {
          ...existing.metadata,
          labels: desired.metadata.labels,
          ownerReferences: desired.metadata.ownerReferences,
        },
        spec: desired.spec,
      });
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Poll: query the triggers, KEDA's activation step, one HPA reconcile

  async function poll(entry: Entry): Promise<void> {
    if (stopped || !installed()) return;
    const parsed = reconcile(entry);
    // Paused: KEDA has stopped the scale loop, so nothing is queried and nothing scales.
    if (!parsed || parsed.pause.paused) return;
    const readings = await Promise.all(parsed.triggers.map(readTrigger));
    if (stopped) return;
    // From here on everything is synchronous: no other writer can slip in between a read and its write.
    const so = store.get('ScaledObject', entry.namespace, entry.name);
    const deployment = store.get('Deployment', parsed.namespace, parsed.targetName);
    if (!so || so.metadata.uid !== entry.uid || !deployment) return;
    const nowMs = clock.now();
    const who = `${parsed.namespace}/${parsed.name}`;
    const status = (so.status ?? {}) as ScaledObjectStatus;
    const failures = readings.flatMap((reading) => (reading.error !== undefined ? [reading.error] : []));
    const isActive = readings.some(
      (reading) => reading.value !== undefined && isTriggerActive(reading.trigger, reading.value),
    );

    // KEDA's executor: activation from zero, deactivation after the cooldown, Ready/Active.
    let specReplicas = replicasOf(deployment);
    const previousActive = findCondition(status.conditions, 'Active');
    const previousReady = findCondition(status.conditions, 'Ready');
    const keda = decideKedaScale(
      {
        nowMs,
        isActive,
        isError: failures.length > 0,
        errorMessages: failures,
        currentReplicas: specReplicas,
        ...pick(parsed, [
          'minReplicaCount',
          'idleReplicaCount',
          'cooldownPeriodSeconds',
          'initialCooldownPeriodSeconds',
        ]),
        ...(status.lastActiveTime ? { lastActiveTimeMs: Date.parse(status.lastActiveTime) } : {}),
        creationTimeMs: Date.parse(so.metadata.creationTimestamp ?? '') || nowMs,
        ...(previousActive ? { previousActive } : {}),
        ...(previousReady ? { previousReady } : {}),
      },
      `${parsed.namespace}/${parsed.targetName}`,
    );
    if (keda.scaleTo !== undefined && keda.scaleTo !== specReplicas) {
      setReplicas(parsed, keda.scaleTo);
      log(`keda: ${who}: ${keda.reason}`);
      specReplicas = keda.scaleTo;
    }
    if (keda.event) note(so, keda.event, KEDA_COMPONENT);
    writeScaledObjectStatus(entry, (current) => ({
      ...current,
      ...(keda.touchLastActiveTime ? { lastActiveTime: isoSeconds(nowMs) } : {}),
      conditions: mergeKedaConditions(current.conditions, [
        ...(keda.ready ? [keda.ready] : []),
        keda.active,
        NO_FALLBACK,
      ]),
    }));

    // The HPA controller's reconcile.
    const hpa = store.get('HorizontalPodAutoscaler', parsed.namespace, parsed.hpaName);
    if (!hpa) return;
    const current = store.get('Deployment', parsed.namespace, parsed.targetName) ?? deployment;
    const counts = observedCounts(current, specReplicas);
    const decision = computeHpaReplicas({
      nowMs,
      specReplicas,
      statusReplicas: counts.statusReplicas,
      readyReplicas: counts.readyReplicas,
      minReplicas: hpaMinReplicas(parsed),
      maxReplicas: parsed.maxReplicaCount,
      metrics: readings.map(toMetricReading),
      ...(parsed.behavior !== undefined ? { behavior: parsed.behavior } : {}),
      ...(options.tolerance !== undefined ? { tolerance: options.tolerance } : {}),
      ...(entry.history ? { history: entry.history } : {}),
    });
    entry.history = decision.history;
    if (decision.rescale) {
      setReplicas(parsed, decision.desiredReplicas);
      log(`keda: ${who}: HPA ${parsed.hpaName}: ${decision.reason}`);
      note(
        hpa,
        {
          type: 'Normal',
          reason: 'SuccessfulRescale',
          message: `New size: ${decision.desiredReplicas}; reason: ${decision.rescaleReason} (${decision.reason})`,
        },
        HPA_COMPONENT,
      );
    }
    const hpaStatus = (hpa.status ?? {}) as { conditions?: unknown[]; lastScaleTime?: string };
    const nextStatus = {
      observedGeneration: hpa.metadata.generation,
      ...(decision.rescale
        ? { lastScaleTime: isoSeconds(nowMs) }
        : hpaStatus.lastScaleTime
          ? { lastScaleTime: hpaStatus.lastScaleTime }
          : {}),
      currentReplicas: specReplicas,
      desiredReplicas: decision.desiredReplicas,
      currentMetrics: decision.metrics.map((outcome) => metricStatus(outcome, parsed.name)),
      conditions: mergeHpaConditions(
        hpaStatus.conditions as HpaStatusCondition[] | undefined,
        decision.conditions,
        nowMs,
      ),
    };
    if (!isDeepStrictEqual(hpa.status, nextStatus)) {
      store.update({ ...hpa, status: nextStatus }, { subresource: 'status' });
    }
  }

  async function readTrigger(trigger: PrometheusTrigger): Promise<Reading> {
    try {
      const samples = await query(trigger.query, { signal: aborter.signal });
      return { trigger, value: triggerValue(trigger, samples) };
    } catch (error) {
      const message = messageOf(error);
      return {
        trigger,
        error: message.startsWith(`${trigger.metricName}:`) ? message : `${trigger.metricName}: ${message}`,
      };
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Writes

  /** Records an Event; a failure is logged, never allowed to undo the decision it describes. */
  function note(involved: KubeObject, event: EventNote, component: string): void {
    const failure = recordEvent(store, clock, involved, event, component);
    if (failure) log(`keda: could not record event ${event.reason} on ${keyOf(involved)}: ${failure.message}`);
  }

  function setReplicas(parsed: ParsedScaledObject, replicas: number): void {
    const deployment = store.get('Deployment', parsed.namespace, parsed.targetName);
    if (!deployment) return;
    store.update({ ...deployment, spec: { ...(deployment.spec as object), replicas } });
  }

  function writeScaledObjectStatus(entry: Entry, change: (current: ScaledObjectStatus) => ScaledObjectStatus): void {
    const so = store.get('ScaledObject', entry.namespace, entry.name);
    if (!so || so.metadata.uid !== entry.uid) return;
    const current = (so.status ?? {}) as ScaledObjectStatus;
    const next = change(structuredClone(current));
    if (isDeepStrictEqual(current, next)) return;
    store.update({ ...so, status: next }, { subresource: 'status' });
  }

  /** `advanced.restoreToOriginalReplicaCount`: on deletion KEDA puts the target back to its original size. */
  function restoreOriginalReplicas(so: KubeObject): void {
    const spec = so.spec as {
      advanced?: { restoreToOriginalReplicaCount?: boolean };
      scaleTargetRef?: { name?: string };
    };
    const original = (so.status as ScaledObjectStatus | undefined)?.originalReplicaCount;
    const target = spec?.scaleTargetRef?.name;
    if (spec?.advanced?.restoreToOriginalReplicaCount !== true || original === undefined || !target) return;
    const deployment = store.get('Deployment', so.metadata.namespace, target);
    if (!deployment || replicasOf(deployment) === original) return;
    store.update({ ...deployment, spec: { ...(deployment.spec as object), replicas: original } });
    log(`keda: ${keyOf(so)} deleted: restored ${target} to its original ${original} replicas`);
  }
}

// ---------------------------------------------------------------------------------------------------------------

function defaultQuery(prometheusUrl: string, region: string, clock: Clock): TriggerQuery {
  const source = new HttpMetricsSource({
    endpoint: prometheusUrl,
    region,
    credentials: TWIN_SIGNING_CREDENTIALS,
    timeoutMs: QUERY_TIMEOUT_MS,
    maxAttempts: 1,
    clock,
  });
  return (promql, { signal }) => source.instant(promql, { signal });
}

/** The message KEDA's reconciler gives each kind of check failure (controllers/keda/scaledobject_controller.go). */
function checkFailedMessage(error: unknown): string {
  if (error instanceof KedaScaleTargetError) return "ScaledObject doesn't have correct scaleTargetRef specification";
  if (error instanceof KedaInvalidScaledObjectError) {
    if (error.field.startsWith('spec.scaleTargetRef'))
      return "ScaledObject doesn't have correct scaleTargetRef specification";
    if (/^spec\.(min|max|idle)ReplicaCount/.test(error.field)) {
      return "ScaledObject doesn't have correct Idle/Min/Max Replica Counts specification";
    }
    // KEDA parses paused-replicas while it builds the HPA (newHPAForScaledObject).
    if (error.field.startsWith('spec.advanced') || error.field.startsWith('metadata.annotations'))
      return 'failed to ensure HPA is correctly created for ScaledObject';
  }
  return "ScaledObject doesn't have correct triggers specification";
}

function toMetricReading(reading: Reading): MetricReading {
  return {
    name: reading.trigger.metricName,
    ...(reading.trigger.name ? { label: reading.trigger.name } : {}),
    targetType: reading.trigger.metricType,
    target: reading.trigger.threshold,
    ...(reading.value !== undefined ? { value: reading.value } : {}),
    ...(reading.error !== undefined ? { error: reading.error } : {}),
  };
}

/** spec.replicas, defaulted to 1 as the API server defaults a Deployment. */
function replicasOf(deployment: KubeObject): number {
  const replicas = (deployment.spec as { replicas?: unknown } | undefined)?.replicas;
  return typeof replicas === 'number' ? replicas : 1;
}

/**
 * status.replicas and status.readyReplicas. The Deployment controller omits zero counts, so once it has written a
 * status (observedGeneration) a missing count is 0; a Deployment no controller has seen yet counts as its spec.
 */
function observedCounts(
  deployment: KubeObject,
  specReplicas: number,
): { statusReplicas: number; readyReplicas: number } {
  const status = deployment.status as
    { replicas?: number; readyReplicas?: number; observedGeneration?: number } | undefined;
  const seen = status?.observedGeneration !== undefined;
  const statusReplicas = status?.replicas ?? (seen ? 0 : specReplicas);
  return { statusReplicas, readyReplicas: status?.readyReplicas ?? (seen ? 0 : statusReplicas) };
}

interface HpaStatusCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/** Sets the updated conditions, keeping lastTransitionTime while a condition's status does not change. */
function mergeHpaConditions(
  previous: HpaStatusCondition[] | undefined,
  updates: Partial<Record<HpaConditionType, HpaConditionUpdate>>,
  nowMs: number,
): HpaStatusCondition[] {
  const result = (previous ?? []).map((condition) => ({ ...condition }));
  for (const type of HPA_CONDITION_ORDER) {
    const update = updates[type];
    if (!update) continue;
    const index = result.findIndex((condition) => condition.type === type);
    const old = index >= 0 ? result[index] : undefined;
    const next: HpaStatusCondition = {
      type,
      status: update.status,
      lastTransitionTime:
        old && old.status === update.status && old.lastTransitionTime ? old.lastTransitionTime : isoSeconds(nowMs),
      reason: update.reason,
      message: update.message,
    };
    if (index >= 0) result[index] = next;
    else result.push(next);
  }
  return result;
}

/** KEDA's conditions: always the four types in KEDA's order, unknown until set. */
function mergeKedaConditions(
  previous: KedaCondition[] | undefined,
  updates: readonly KedaCondition[],
): KedaCondition[] {
  return KEDA_CONDITION_ORDER.map((type) => {
    const update = updates.find((condition) => condition.type === type);
    if (update) return { ...update };
    return findCondition(previous, type) ?? { type, status: 'Unknown' };
  });
}

function findCondition(conditions: KedaCondition[] | undefined, type: string): KedaCondition | undefined {
  const found = conditions?.find((condition) => condition.type === type);
  return found ? { ...found } : undefined;
}

function pick<T extends object, K extends keyof T>(source: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const result: Partial<Pick<T, K>> = {};
  for (const key of keys) if (source[key] !== undefined) result[key] = source[key];
  return result;
}

function keyOf(object: KubeObject): string {
  return `${object.metadata.namespace ?? 'default'}/${object.metadata.name}`;
}

function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
