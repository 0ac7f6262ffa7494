import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { EKSClient } from '@aws-sdk/client-eks';
import { type Clock, systemClock } from '../../shared/clock/index.js';
import { type ClusterClient } from '../../shared/kube/index.js';
import { connectToEks } from '../../shared/kube/connection/index.js';
import {
  controlPlaneRbac,
  defaultServiceName,
  vllmDeployment,
  type VllmDeploymentInputSpec,
  vllmService,
  vllmServiceMonitor,
} from '../../shared/kube/manifests/index.js';
import { type AmpTwin, startAmpTwin } from '../aws/amp.js';
import { createTwinAmpWorkspace } from '../aws/ampWorkspace.js';
import { type CloudWatchTwin, startCloudWatchTwin } from '../aws/cloudwatch.js';
import { type DynamoDbTwin, startDynamoDbTwin } from '../aws/dynamodb.js';
import { type EksTwin, startEksTwin } from '../aws/eks.js';
import { type SecretsManagerTwin, startSecretsManagerTwin } from '../aws/secretsManager.js';
import { type SnsTwin, startSnsTwin } from '../aws/sns.js';
import { startStepFunctionsTwin, type StepFunctionsTwin } from '../aws/stepFunctions.js';
import { type SlackWebhookSink, startSlackWebhookSink } from '../slack/webhookSink.js';
import { CALIBRATION_HISTORY_TABLE } from '../../shared/calibration/history/index.js';
import { ALERT_SILENCES_TABLE } from '../../shared/alerts/silences/index.js';
import { ALERT_STATE_TABLE } from '../../shared/alerts/state/index.js';
import { ampRuleGroupsNamespaceData } from '../../shared/alerts/export/index.js';
import { grafanaDashboardConfigMaps } from '../../shared/dashboards/index.js';
import { ALERTING_ENGINES, type AlertingEngine } from '../../shared/preflight/index.js';
import { startWorkloadControllers } from '../kube/controllers/startWorkloadControllers.js';
import type { RunningReplica, Workloads } from '../kube/controllers/types.js';
import { type KedaController, startKedaController } from '../kube/keda/controller.js';
import { MemoryPodLogStore } from '../kube/logs.js';
import { EksAccessEntries, type KubeApiServer, startKubeApiServer, writeKubeconfig } from '../kube/server/index.js';
import { MemoryObjectStore } from '../kube/store.js';
import { ensurePrometheus } from '../prometheus/ensurePrometheus.js';
import type { TargetGroups } from '../prometheus/scrapeConfig.js';
import { type PrometheusInstance, startPrometheus } from '../prometheus/startPrometheus.js';
import { type ControlServer, startControlServer } from './control.js';
import { putTwinHeartbeatAlarm, twinAlarmPublisher } from './operationsAlarms.js';
import { startBackgroundTraffic, type BackgroundTraffic } from './backgroundTraffic.js';
import { TwinStartError } from './errors.js';
import { FaultController } from './faults.js';
import type { Profile } from '../profile/profile.js';
import { type TwinState, writeTwinState } from './stateFile.js';
import {
  TWIN_ALARM_EVALUATION_INTERVAL_MS,
  TWIN_ALERT_RULES_FILE,
  TWIN_AMP_WORKSPACE_ID,
  TWIN_CLUSTER,
  TWIN_CREDENTIALS,
  TWIN_IDENTITIES,
  TWIN_REGION,
  TWIN_RESOURCES,
} from './constants.js';
import { ADDON_NAMESPACES, dcgmExporterDaemonSet, kedaCrds, namespace, serviceMonitorCrd } from './world.js';

export interface StartTwinOptions {
  profile: Profile;
  clock?: Clock;
  /** Progress lines for the user. */
  log?: (line: string) => void;
  /** Every controller decision too (Pods, rollouts, scaling, k6). */
  verbose?: boolean;
  /** May Debian's prometheus be installed when missing (root + apt-get)? */
  allowInstallPrometheus?: boolean;
  /** Written once everything is ready; the kubeconfig files are written beside it. */
  stateFile?: string;
  /** How long to wait for every replica to load and every target to be scraped (default: load time + 60 s). */
  readyTimeoutMs?: number;
  /** Stops the start-up (Ctrl-C while a model loads): what was started is stopped, and startTwin rejects. */
  signal?: AbortSignal;
  /**
   * Who evaluates the alert rules on this twin, as the stage setting `alerting.engine` says (default `lambda`). With
   * `amp` the twin's Prometheus starts without the product's rules, as an AMP workspace holds nothing until the
   * installer puts them there; with `lambda` it preloads them (kinder than AWS: preflight item 5 finds them).
   */
  alerting?: { engine: AlertingEngine };
}

export interface Twin {
  profile: Profile;
  state: TwinState;
  /** The vLLM replicas running now (Pods come and go with scaling and rollouts). */
  replicas(): RunningReplica[];
  /** The product's cluster client, connected the way it connects to EKS (DescribeCluster + EKS token). */
  cluster: ClusterClient;
  store: MemoryObjectStore;
  workloads: Workloads;
  kubeApi: KubeApiServer;
  /**
   * The cluster's EKS access entries (TWIN_IDENTITIES: the operator's admin entry, one per function group); a test
   * may add its own. EKS tokens of keys without an entry are refused (401), as EKS refuses them.
   */
  accessEntries: EksAccessEntries;
  prometheus: PrometheusInstance;
  /** AMP's control plane: rule groups namespaces loaded into `prometheus`, the alert manager definition run by a real Alertmanager. */
  amp: AmpTwin;
  cloudwatch: CloudWatchTwin;
  eks: EksTwin;
  sns: SnsTwin;
  /** Step Functions: the calibration state machine, for the product's client-sfn calls. */
  stepFunctions: StepFunctionsTwin;
  dynamodb: DynamoDbTwin;
  secretsManager: SecretsManagerTwin;
  /** Where the Slack notifier's messages arrive. */
  slack: SlackWebhookSink;
  /** Injects and clears faults on the replicas (also reachable over HTTP at `state.controlUrl`). */
  faults: FaultController;
  control: ControlServer;
  /** The profile's production traffic through the Service (`traffic`), when it has some. */
  background: BackgroundTraffic | undefined;
  stop(): Promise<void>;
}

/**
 * Starts the local twin of an EKS cluster serving vLLM: a Kubernetes API server with controllers (Deployments →
 * Pods → simulated vLLM replicas on GPU nodes, Services, ServiceMonitors → the real Prometheus, the DCGM
 * DaemonSet, k6 Jobs, KEDA), the AWS endpoints (EKS, CloudWatch), then builds the guide's world through the API
 * with the product's own client and manifests. Resolves once every replica is Ready and every target is scraped; on
 * failure or abort, whatever was started is stopped again.
 */
export async function startTwin(options: StartTwinOptions): Promise<Twin> {
  const { profile } = options;
  const clock = options.clock ?? systemClock;
  const log = options.log ?? (() => undefined);
  const detail = options.verbose ? log : () => undefined;
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  };
  const checkpoint = () => {
    if (options.signal?.aborted) throw new TwinStartError('start-up stopped before the twin was ready');
  };

  try {
    const installation = await ensurePrometheus({ allowInstall: options.allowInstallPrometheus ?? false, log });
    checkpoint();
    const store = new MemoryObjectStore({ clock });
    const logs = new MemoryPodLogStore();
    const prometheus = await startPrometheus({
      bin: installation.bin,
      scrapeIntervalSeconds: profile.prometheus.scrapeIntervalSeconds,
      targetGroups: {},
      externalLabels: { cluster: TWIN_CLUSTER },
      // The alert rules, loaded as AMP loads a rule groups namespace: /api/v1/rules lists them (preflight item 5).
      // Not with the AMP engine: there the installer must put them into the workspace (through the control plane below).
      ruleFileContents:
        options.alerting?.engine === ALERTING_ENGINES.amp
          ? {}
          : { [TWIN_ALERT_RULES_FILE]: ampRuleGroupsNamespaceData() },
      // AMP's rule groups namespaces, installed through the twin's AMP control plane while it runs.
      ruleNamespaces: true,
      // AMP's ingestion lag: with a lag, an agent scrapes and `prometheus.url` answers queries that much later.
      remoteWrite: profile.amp,
      log,
    });
    stops.push(() => prometheus.stop());
    // Remember the targets the controllers hand to Prometheus, to know when every replica is in them.
    let targets: TargetGroups = {};
    const targetSink = {
      setTargets: async (groups: TargetGroups) => {
        targets = groups;
        await prometheus.setTargets(groups);
      },
    };
    const workloads = startWorkloadControllers({
      store,
      logs,
      profile,
      clock,
      prometheus: targetSink,
      region: TWIN_REGION,
      log: detail,
    });
    stops.push(() => workloads.stop());
    const keda: KedaController = startKedaController({
      store,
      prometheusUrl: prometheus.url,
      region: TWIN_REGION,
      clock,
      defaultPollingIntervalSeconds: profile.keda.pollingIntervalSeconds,
      log: detail,
    });
    stops.push(() => keda.stop());

    const accessEntries = twinAccessEntries();
    const adminToken = `twin-admin-${randomBytes(16).toString('hex')}`;
    const readOnlyToken = `twin-read-only-${randomBytes(16).toString('hex')}`;
    const kubeApi = await startKubeApiServer({
      store,
      logs,
      clusterName: TWIN_CLUSTER,
      region: TWIN_REGION,
      tokens: { admin: [adminToken], readOnly: [readOnlyToken] },
      // As EKS: an IAM identity without an access entry gets 401 Unauthorized, however valid its token.
      eksAccess: { entries: accessEntries, unmapped: 'refuse' },
      clock,
      podEndpoint: (namespace, pod) => workloads.podEndpoint(namespace, pod),
      log: detail,
    });
    stops.push(() => kubeApi.stop());
    const eks = await startEksTwin({
      clusters: [{ name: TWIN_CLUSTER, endpoint: kubeApi.url, region: TWIN_REGION, accessEntries }],
      clock,
    });
    stops.push(() => eks.stop());
    // CloudWatch evaluates its alarms and publishes them to the operations topic of the twin's SNS (started next).
    const snsAddress: { endpoint?: string } = {};
    const alarmPublisher = twinAlarmPublisher(() => snsAddress.endpoint);
    const cloudwatch = await startCloudWatchTwin({
      region: TWIN_REGION,
      clock,
      log: detail,
      alarmEvaluationIntervalMs: TWIN_ALARM_EVALUATION_INTERVAL_MS,
      publishAlarm: (topicArn, subject, message) => alarmPublisher.publish(topicArn, subject, message),
    });
    stops.push(async () => {
      await cloudwatch.stop();
      alarmPublisher.destroy();
    });
    const sns = await startSnsTwin({ region: TWIN_REGION, clock, log: detail });
    stops.push(() => sns.stop());
    snsAddress.endpoint = sns.endpoint;
    const calibrationTopicArn = sns.createTopic(TWIN_RESOURCES.calibrationTopic);
    const alertTopicArn = sns.createTopic(TWIN_RESOURCES.alertTopic);
    const preflightTopicArn = sns.createTopic(TWIN_RESOURCES.preflightTopic);
    const operationsTopicArn = sns.createTopic(TWIN_RESOURCES.operationsTopic);
    // AMP's control plane: namespaces go into the Prometheus above; the alert manager definition runs in Debian's
    // Alertmanager (started with the first definition), whose SNS receivers publish into this SNS.
    const ampWorkspace = await createTwinAmpWorkspace({
      prometheus,
      promtool: installation.promtool,
      alertmanager: installation.alertmanager,
      snsEndpoint: sns.endpoint,
      credentials: TWIN_CREDENTIALS,
      log: detail,
    });
    stops.push(() => ampWorkspace.stop());
    const amp = await startAmpTwin({
      region: TWIN_REGION,
      workspaceId: TWIN_AMP_WORKSPACE_ID,
      // DescribeWorkspace names the twin's Prometheus as the workspace's query endpoint.
      prometheusEndpoint: prometheus.url,
      backend: ampWorkspace,
      clock,
      log: detail,
    });
    stops.push(() => amp.stop());
    // Step Functions: the calibration state machine runs only once sim/harness serves it (serveTwinCalibrations);
    // until then an execution fails, named, as one of a state machine whose Lambda functions are missing would.
    const stepFunctions = await startStepFunctionsTwin({ region: TWIN_REGION, clock, log: detail });
    stops.push(() => stepFunctions.stop());
    const calibrationStateMachineArn = stepFunctions.setStateMachine(TWIN_RESOURCES.calibrationStateMachine, () =>
      Promise.resolve({
        status: 'FAILED',
        error: 'Lambda.ResourceNotFoundException',
        cause: "the twin's calibration functions are not served: call serveTwinCalibrations (sim/harness)",
      }),
    );
    await putTwinHeartbeatAlarm(cloudwatch.endpoint, operationsTopicArn);
    const dynamodb = await startDynamoDbTwin({
      region: TWIN_REGION,
      tables: [
        { TableName: TWIN_RESOURCES.historyTable, ...CALIBRATION_HISTORY_TABLE },
        { TableName: TWIN_RESOURCES.alertStateTable, ...ALERT_STATE_TABLE },
        { TableName: TWIN_RESOURCES.alertSilencesTable, ...ALERT_SILENCES_TABLE },
      ],
      log: detail,
    });
    stops.push(() => dynamodb.stop());
    // Slack's incoming webhook, and the secret that holds its URL, as the deployed stack keeps it.
    const slack = await startSlackWebhookSink({ clock, log: detail });
    stops.push(() => slack.stop());
    const secretsManager = await startSecretsManagerTwin({
      region: TWIN_REGION,
      secrets: { [TWIN_RESOURCES.slackWebhookSecret]: slack.url },
      clock,
      log: detail,
    });
    stops.push(() => secretsManager.stop());
    const faults = new FaultController({
      workloads,
      clock,
      log,
      world: {
        prometheusPids: () => [
          prometheus.pid,
          ...(prometheus.ingestion === undefined ? [] : [prometheus.ingestion.agent.pid]),
        ],
        deletePod: (pod) => void store.delete('Pod', profile.namespace, pod),
        crashContainer: (pod) => workloads.crashVllmContainer(profile.namespace, pod),
      },
    });
    // Stopped after the control endpoint (stops run in reverse), so no request can inject a fault meanwhile.
    stops.push(() => Promise.resolve(faults.stop()));
    const control = await startControlServer({ faults, log: detail });
    stops.push(() => control.stop());

    // kubectl sends tokens only over https, so the kubeconfigs name the API server's https address.
    const kubeDir = options.stateFile
      ? dirname(resolve(options.stateFile))
      : await mkdtemp(join(tmpdir(), 'vllm-pilot-twin-'));
    const stem = options.stateFile ? basename(options.stateFile).replace(/\.json$/, '') : 'twin';
    const kubeconfigPath = join(kubeDir, `${stem}.kubeconfig`);
    const readOnlyKubeconfigPath = join(kubeDir, `${stem}.read-only.kubeconfig`);
    await writeKubeconfig(kubeconfigPath, { server: kubeApi.httpsUrl, clusterName: TWIN_CLUSTER, token: adminToken });
    await writeKubeconfig(readOnlyKubeconfigPath, {
      server: kubeApi.httpsUrl,
      clusterName: TWIN_CLUSTER,
      token: readOnlyToken,
      user: 'twin-read-only',
    });
    stops.push(async () => {
      await rm(kubeconfigPath, { force: true });
      await rm(readOnlyKubeconfigPath, { force: true });
      if (!options.stateFile) await rm(kubeDir, { recursive: true, force: true });
    });
    checkpoint();

    // The product's client, connected as it connects to EKS: DescribeCluster, then an EKS token per request.
    const cluster = await connectToEks({
      clusterName: TWIN_CLUSTER,
      region: TWIN_REGION,
      eks: new EKSClient({ region: TWIN_REGION, endpoint: eks.endpoint, credentials: TWIN_CREDENTIALS }),
      credentials: TWIN_CREDENTIALS,
      clock,
    });
    const deploymentInput = vllmInput(profile);
    await buildWorld(cluster, profile, deploymentInput, log);
    checkpoint();

    const timeoutMs = options.readyTimeoutMs ?? profile.startup.modelLoadSeconds * 1000 + 60_000;
    log(`waiting for ${profile.replicas} replica(s) to load the model (${profile.startup.modelLoadSeconds} s)`);
    await waitUntil(
      () => workloads.replicas().filter((r) => r.ready).length >= profile.replicas,
      timeoutMs,
      () => new TwinStartError(`replicas did not become Ready within ${timeoutMs} ms`),
      checkpoint,
    );
    const targetCount = (job: keyof TargetGroups) => (targets[job] ?? []).reduce((n, g) => n + g.targets.length, 0);
    await waitUntil(
      () =>
        (['vllm', 'dcgm-exporter', 'kubelet-cadvisor'] as const).every((job) => targetCount(job) >= profile.replicas),
      timeoutMs,
      () => new TwinStartError('the controllers did not hand every replica to Prometheus'),
      checkpoint,
    );
    await prometheus.waitForTargets({ timeoutMs });
    checkpoint();

    const serviceName = defaultServiceName(profile.deployment);
    const serviceUrl = workloads.serviceUrl(profile.namespace, serviceName);
    if (!serviceUrl) throw new TwinStartError(`the Service ${profile.namespace}/${serviceName} has no proxy`);
    // The target's users, when the profile has some: they talk to the Service from now on, as on AWS.
    const background =
      profile.traffic === undefined
        ? undefined
        : startBackgroundTraffic({ traffic: profile.traffic, serviceUrl, model: profile.model, clock, log });
    if (background !== undefined) stops.push(() => background.stop());
    const state: TwinState = {
      version: 2,
      profile: profile.name,
      pid: process.pid,
      startedAt: new Date(clock.now()).toISOString(),
      clusterName: TWIN_CLUSTER,
      region: TWIN_REGION,
      namespace: profile.namespace,
      deployment: profile.deployment,
      service: serviceName,
      model: profile.model,
      vllmVersion: profile.vllmVersion,
      prometheusUrl: prometheus.url,
      kubeApiUrl: kubeApi.httpsUrl,
      kubeconfigPath,
      readOnlyKubeconfigPath,
      serviceUrl,
      controlUrl: control.url,
      replicas: workloads.replicas().map(replicaState),
      aws: {
        region: TWIN_REGION,
        cloudwatchEndpoint: cloudwatch.endpoint,
        eksEndpoint: eks.endpoint,
        snsEndpoint: sns.endpoint,
        dynamodbEndpoint: dynamodb.endpoint,
        calibrationTopicArn,
        historyTable: TWIN_RESOURCES.historyTable,
        alertTopicArn,
        alertStateTable: TWIN_RESOURCES.alertStateTable,
        alertSilencesTable: TWIN_RESOURCES.alertSilencesTable,
        secretsManagerEndpoint: secretsManager.endpoint,
        slackWebhookSecretId: TWIN_RESOURCES.slackWebhookSecret,
        preflightTopicArn,
        operationsTopicArn,
        ampControlPlaneEndpoint: amp.endpoint,
        ampWorkspaceId: amp.workspaceId,
        stepFunctionsEndpoint: stepFunctions.endpoint,
        calibrationStateMachineArn,
      },
      preflightSettings: twinPreflightSettings(profile),
    };
    if (options.stateFile) await writeTwinState(options.stateFile, state);

    let stopped: Promise<void> | undefined;
    return {
      profile,
      state,
      replicas: () => workloads.replicas(),
      cluster,
      store,
      workloads,
      kubeApi,
      accessEntries,
      prometheus,
      amp,
      cloudwatch,
      eks,
      sns,
      stepFunctions,
      dynamodb,
      secretsManager,
      slack,
      faults,
      control,
      background,
      stop: () => (stopped ??= stopAll()),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** The product's Deployment input for the profile: the profile's engine settings become vLLM's container args. */
function vllmInput(profile: Profile): VllmDeploymentInputSpec {
  return {
    name: profile.deployment,
    namespace: profile.namespace,
    model: profile.model,
    gpuMemoryUtilization: profile.gpu.gpuMemoryUtilization,
    maxModelLen: profile.engine.maxModelLen,
    maxNumSeqs: profile.engine.maxNumSeqs,
    replicas: profile.replicas,
    // The profile's warmup (its first requests are the slow ones), not the guide's 100: Pods start in seconds.
    warmup: profile.startup.warmupRequests > 0 ? { requests: profile.startup.warmupRequests } : false,
  };
}

/**
 * The preflight settings that suit the twin, as a deployed stack would set PREFLIGHT_SETTINGS for a cluster like it:
 * freshness from its short scrape interval, a scale-cycle window of the last hour at a step fine enough to see the
 * demo's one-minute cycle, and the warmup its Pods run (the profile's, not the guide's 100).
 */
export function twinPreflightSettings(profile: Profile): TwinState['preflightSettings'] {
  const scrape = profile.prometheus.scrapeIntervalSeconds;
  return {
    // Four scrape intervals, as the default is four of AWS's 30 s; at least 10 s so a slow first scrape is not stale;
    // plus AMP's ingestion lag at its longest, since a sample is that much older when a query first sees it.
    freshnessSeconds:
      Math.max(10, 4 * scrape) + Math.ceil(profile.amp.ingestionLagSeconds + profile.amp.ingestionJitterSeconds),
    scaleCycleLookbackSeconds: 3600,
    scaleCycleStepSeconds: Math.max(1, scrape),
    warmupRequests: profile.startup.warmupRequests,
  };
}

/**
 * The guide's cluster, applied through the API as a platform team would: the add-ons (CRDs, the DCGM exporter
 * DaemonSet), the Grafana dashboard ConfigMaps for the sidecar, then the product's vLLM Deployment, Service and
 * ServiceMonitor.
 */
/** The access entries of TWIN_IDENTITIES, each identity's keys a session of its role. */
function twinAccessEntries(): EksAccessEntries {
  const entries = new EksAccessEntries();
  for (const identity of Object.values(TWIN_IDENTITIES)) {
    entries.create({
      principalArn: identity.roleArn,
      kubernetesGroups: identity.kubernetesGroups,
      clusterAdmin: identity.clusterAdmin,
    });
    entries.assumeRole(identity.accessKeyId, identity.roleArn);
  }
  return entries;
}

async function buildWorld(
  cluster: ClusterClient,
  profile: Profile,
  input: VllmDeploymentInputSpec,
  log: (line: string) => void,
): Promise<void> {
  const objects = [
    namespace(ADDON_NAMESPACES.gpu),
    namespace(ADDON_NAMESPACES.monitoring),
    ...(profile.keda.installed ? [namespace(ADDON_NAMESPACES.keda), ...kedaCrds()] : []),
    serviceMonitorCrd(),
    dcgmExporterDaemonSet(),
    ...grafanaDashboardConfigMaps({ namespace: ADDON_NAMESPACES.monitoring }),
    ...(profile.namespace === 'default'
      ? [namespace('default')]
      : [namespace('default'), namespace(profile.namespace)]),
    vllmDeployment(input),
    vllmService(input),
    vllmServiceMonitor(input),
    // The product's RBAC, as a user applies it, for the target's namespace: the functions' own identities get it.
    ...controlPlaneRbac({ namespaces: [profile.namespace] }),
  ];
  for (const object of objects) {
    const { action } = await cluster.apply(object);
    log(
      `${object.kind.toLowerCase()} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ''}${object.metadata.name} ${action}`,
    );
  }
}

function replicaState(replica: RunningReplica): TwinState['replicas'][number] {
  return {
    name: replica.pod,
    node: replica.node,
    gpuUuid: replica.vllm.identity.gpuUuid,
    url: replica.url,
    metricsUrl: replica.vllm.metricsUrl,
    dcgmMetricsUrl: replica.nodeAgent.dcgmMetricsUrl,
    cadvisorMetricsUrl: replica.nodeAgent.cadvisorMetricsUrl,
  };
}

async function waitUntil(
  done: () => boolean,
  timeoutMs: number,
  onTimeout: () => Error,
  checkpoint: () => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    checkpoint();
    if (Date.now() > deadline) throw onTimeout();
    await new Promise((r) => setTimeout(r, 100));
  }
}
