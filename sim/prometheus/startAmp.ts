import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { guardProcesses, launchPrometheus, type RunningPrometheus, terminate } from './launch.js';
import {
  ALERT_RESEND_DELAY,
  assembleInstance,
  type PrometheusInstance,
  type ValidatedStart,
} from './prometheusInstance.js';
import { type RemoteWriteRelay, startRemoteWriteRelay } from './remoteWriteRelay.js';
import { renderAgentConfig, renderReceiverConfig } from './scrapeConfig.js';

/**
 * AMP as AWS runs it, from real parts: a Prometheus in agent mode scrapes (as kube-prometheus-stack or an agent in
 * the cluster does) and remote-writes to a relay that holds each batch for the ingestion lag, then hands it to a
 * Prometheus with `--web.enable-remote-write-receiver` that scrapes nothing, holds the rules (as AMP's ruler does)
 * and answers every query. Started in that order (each needs the next one's URL), stopped the other way round.
 */
export async function startAmp(
  start: ValidatedStart,
  lag: { ingestionLagSeconds: number; ingestionJitterSeconds: number },
): Promise<PrometheusInstance> {
  const { dataDir, log } = start;
  const query = {
    configFile: join(dataDir, 'prometheus.yml'),
    logFile: join(dataDir, 'prometheus.log'),
    tsdbDir: join(dataDir, 'tsdb'),
  };
  const agent = {
    configFile: join(dataDir, 'agent.yml'),
    logFile: join(dataDir, 'agent.log'),
    walDir: join(dataDir, 'agent-wal'),
  };
  await mkdir(query.tsdbDir);
  await mkdir(agent.walDir);
  const writeQueryConfig = (alertmanagers: readonly string[]) =>
    writeFile(
      query.configFile,
      renderReceiverConfig({
        evaluationIntervalSeconds: start.evaluationIntervalSeconds,
        ruleFiles: start.ruleFiles,
        alertmanagers,
      }),
    );
  await writeQueryConfig([]);

  let queryRunning: RunningPrometheus | undefined;
  let relay: RemoteWriteRelay | undefined;
  try {
    queryRunning = await launchPrometheus({
      bin: start.bin,
      args: [
        `--config.file=${query.configFile}`,
        `--storage.tsdb.path=${query.tsdbDir}`,
        '--web.enable-remote-write-receiver',
        '--web.enable-lifecycle',
        `--rules.alert.resend-delay=${ALERT_RESEND_DELAY}`,
      ],
      identity: { flag: 'storage.tsdb.path', path: query.tsdbDir },
      logFile: query.logFile,
      readyTimeoutMs: start.readyTimeoutMs,
      role: 'Prometheus (AMP query side)',
      log,
    });
    relay = await startRemoteWriteRelay({
      receiverUrl: `${queryRunning.url}/api/v1/write`,
      lagSeconds: lag.ingestionLagSeconds,
      jitterSeconds: lag.ingestionJitterSeconds,
      log,
    });
    await writeFile(
      agent.configFile,
      renderAgentConfig({
        scrapeIntervalSeconds: start.scrapeIntervalSeconds,
        targetFiles: start.targetFiles,
        ...(start.externalLabels ? { externalLabels: start.externalLabels } : {}),
        remoteWriteUrl: relay.url,
      }),
    );
    // Agent mode keeps only a WAL (--storage.agent.path); --storage.tsdb.path has no meaning there, so it is not passed.
    const agentRunning = await launchPrometheus({
      bin: start.bin,
      args: [
        `--config.file=${agent.configFile}`,
        '--enable-feature=agent',
        `--storage.agent.path=${agent.walDir}`,
        '--web.enable-lifecycle',
      ],
      identity: { flag: 'storage.agent.path', path: agent.walDir },
      logFile: agent.logFile,
      readyTimeoutMs: start.readyTimeoutMs,
      role: 'Prometheus agent',
      log,
    });
    const queryProcess = queryRunning;
    const relayRunning = relay;
    log(
      `Prometheus as AMP ready: queries at ${queryProcess.url} (pid ${queryProcess.pid}); the agent at ${agentRunning.url} (pid ${agentRunning.pid}) scrapes and remote-writes through ${relayRunning.url}, ${lag.ingestionLagSeconds} s ± ${lag.ingestionJitterSeconds} s late (data ${dataDir})`,
    );
    return assembleInstance({
      query: { url: queryProcess.url, pid: queryProcess.pid, configFile: query.configFile, logFile: query.logFile },
      scrapeUrl: agentRunning.url,
      dataDir,
      targetFiles: start.targetFiles,
      groups: start.groups,
      ingestion: {
        lagSeconds: lag.ingestionLagSeconds,
        jitterSeconds: lag.ingestionJitterSeconds,
        agent: { url: agentRunning.url, pid: agentRunning.pid, configFile: agent.configFile, logFile: agent.logFile },
        relayUrl: relayRunning.url,
        relayCounts: () => relayRunning.counts(),
      },
      // The rules live on the query side; the agent's config is reloaded too so an edited scrape config takes effect.
      reloadTargets: [
        { url: queryProcess.url, role: 'Prometheus (AMP query side)' },
        { url: agentRunning.url, role: 'Prometheus agent' },
      ],
      queryRole: 'Prometheus (AMP query side)',
      ruleNamespaceDir: start.ruleNamespaceDir,
      writeQueryConfig,
      async stopParts() {
        // The agent first: on SIGTERM it flushes its queue to the relay, which answers at once. Then the relay drops
        // what it still holds (see RemoteWriteRelay.stop), then the query side.
        await terminate(agentRunning.proc);
        const counts = await relayRunning.stop();
        await terminate(queryProcess.proc);
        log(
          `Prometheus as AMP stopped (query pid ${queryProcess.pid}, agent pid ${agentRunning.pid}); the relay forwarded ${counts.forwarded} batches and dropped ${counts.dropped} still held`,
        );
      },
      releaseGuard: guardProcesses(
        [
          { running: queryProcess, role: 'Prometheus (AMP query side)' },
          { running: agentRunning, role: 'Prometheus agent' },
        ],
        dataDir,
        log,
      ),
    });
  } catch (error) {
    await relay?.stop();
    if (queryRunning) await terminate(queryRunning.proc);
    throw error;
  }
}
