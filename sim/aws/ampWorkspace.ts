import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALERTMANAGER_INSTALL_HINT, type AlertmanagerInstallation } from '../prometheus/locateAlertmanager.js';
import type { PrometheusInstance } from '../prometheus/prometheusInstance.js';
import { type RunningAlertmanager, startAlertmanager } from '../prometheus/startAlertmanager.js';
import { checkAlertmanagerConfig, checkRules } from '../prometheus/toolChecks.js';
import {
  AmpDataRefusedError,
  checkRuleGroupsNamespaceData,
  parseAlertManagerDefinition,
  twinAlertmanagerConfig,
} from './ampData.js';

/**
 * What an AMP workspace does with what its control plane accepts: the ruler loads each rule groups namespace, the
 * alert manager runs the definition. The control-plane twin (amp.ts) keeps the statuses; this port does the work.
 * Each method resolves once the change is in effect and rejects with the status reason when it is refused.
 */
export interface AmpWorkspaceBackend {
  installRuleGroupsNamespace(name: string, text: string): Promise<void>;
  removeRuleGroupsNamespace(name: string): Promise<void>;
  installAlertManagerDefinition(text: string): Promise<void>;
  removeAlertManagerDefinition(): Promise<void>;
  /** The Alertmanager's address while a definition runs (`http://127.0.0.1:PORT`), else undefined. */
  alertmanagerUrl(): string | undefined;
  /** Stops the Alertmanager and removes its files. */
  stop(): Promise<void>;
}

export interface TwinAmpWorkspaceOptions {
  /** The Prometheus that evaluates the rules (started with `ruleNamespaces: true`). */
  prometheus: Pick<PrometheusInstance, 'setRuleNamespace' | 'setAlertmanagers'>;
  /** promtool, which checks each rules file before it is installed. */
  promtool: string | undefined;
  /** Alertmanager (and amtool): without it, every alert manager definition fails with the reason. */
  alertmanager: AlertmanagerInstallation | undefined;
  /** The twin's SNS endpoint: the definition's SNS receivers publish there. */
  snsEndpoint: string;
  /** What the Alertmanager signs its SNS requests with (the twin's; its SNS checks only that there is a signature). */
  credentials: { accessKeyId: string; secretAccessKey: string };
  log?: (line: string) => void;
}

/**
 * The twin's AMP workspace from real parts: promtool checks a rules file and the twin's Prometheus loads it (a file
 * per namespace, then a reload); amtool checks a definition and Debian's Alertmanager runs it, started with the first
 * definition (Prometheus's `alerting` then points at it) and stopped when the definition is deleted.
 */
export async function createTwinAmpWorkspace(options: TwinAmpWorkspaceOptions): Promise<AmpWorkspaceBackend> {
  const { prometheus, promtool, alertmanager, snsEndpoint, credentials } = options;
  const log = options.log ?? (() => undefined);
  const dataDir = await mkdtemp(join(tmpdir(), 'vllm-pilot-alertmanager-'));
  const configFile = join(dataDir, 'alertmanager.yml');
  let running: RunningAlertmanager | undefined;
  let generation = 0;
  let activeDir: string | undefined;

  async function writeAtomically(path: string, text: string): Promise<void> {
    await writeFile(`${path}.tmp`, text);
    await rename(`${path}.tmp`, path);
  }

  return {
    async installRuleGroupsNamespace(name, text) {
      checkRuleGroupsNamespaceData(name, text);
      if (promtool === undefined)
        throw new Error('the twin cannot check rules: promtool (Debian package prometheus) is not installed');
      const reason = await checkRules(promtool, text, `namespace ${name}`);
      if (reason !== undefined) throw new AmpDataRefusedError(reason);
      await prometheus.setRuleNamespace(name, text);
      log(`amp twin: rule groups namespace ${name} loaded into Prometheus`);
    },

    async removeRuleGroupsNamespace(name) {
      await prometheus.setRuleNamespace(name, undefined);
      log(`amp twin: rule groups namespace ${name} removed from Prometheus`);
    },

    async installAlertManagerDefinition(text) {
      const parts = parseAlertManagerDefinition(text);
      if (alertmanager === undefined) throw new Error(`the twin has no Alertmanager: ${ALERTMANAGER_INSTALL_HINT}`);
      // Each definition in a directory of its own, so the running one keeps its templates until the next is in.
      generation += 1;
      const dir = join(dataDir, `definition-${generation}`);
      const templateDir = join(dir, 'templates');
      await mkdir(templateDir, { recursive: true });
      try {
        for (const [name, body] of Object.entries(parts.templateFiles)) await writeFile(join(templateDir, name), body);
        const candidate = join(dir, 'alertmanager.yml');
        await writeFile(candidate, twinAlertmanagerConfig(parts, { snsEndpoint, templateDir }));
        if (alertmanager.amtool !== undefined) {
          const reason = await checkAlertmanagerConfig(alertmanager.amtool, candidate, 'alertmanager_config');
          if (reason !== undefined) throw new AmpDataRefusedError(reason);
        }
        const previous = await readFile(configFile, 'utf8').catch(() => undefined);
        await writeAtomically(configFile, await readFile(candidate, 'utf8'));
        if (running === undefined) {
          try {
            running = await startAlertmanager({
              bin: alertmanager.bin,
              configFile,
              storageDir: join(dataDir, 'storage'),
              logFile: join(dataDir, 'alertmanager.log'),
              identityMarker: dataDir,
              dataDir,
              env: {
                PATH: process.env.PATH ?? '/usr/bin:/bin',
                AWS_ACCESS_KEY_ID: credentials.accessKeyId,
                AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
                AWS_EC2_METADATA_DISABLED: 'true',
              },
              log,
            });
          } catch (error) {
            await rm(configFile, { force: true });
            throw error;
          }
          await prometheus.setAlertmanagers([running.address]);
          log(
            `amp twin: alert manager definition running in Alertmanager at ${running.url} (pid ${running.pid}); Prometheus sends its alerts there, its SNS receivers publish to ${snsEndpoint}`,
          );
        } else {
          try {
            await running.reload();
          } catch (error) {
            if (previous !== undefined) await writeAtomically(configFile, previous);
            await running.reload().catch(() => undefined);
            throw error;
          }
          log(`amp twin: alert manager definition reloaded into Alertmanager at ${running.url}`);
        }
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
      if (activeDir !== undefined) await rm(activeDir, { recursive: true, force: true });
      activeDir = dir;
    },

    async removeAlertManagerDefinition() {
      const stopping = running;
      running = undefined;
      if (stopping !== undefined) {
        await prometheus.setAlertmanagers([]);
        await stopping.stop();
      }
      await rm(configFile, { force: true });
      await rm(join(dataDir, 'storage'), { recursive: true, force: true });
      if (activeDir !== undefined) await rm(activeDir, { recursive: true, force: true });
      activeDir = undefined;
      log('amp twin: alert manager definition removed; Alertmanager stopped');
    },

    alertmanagerUrl: () => running?.url,

    async stop() {
      await running?.stop();
      running = undefined;
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
