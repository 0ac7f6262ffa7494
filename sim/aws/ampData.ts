import { join } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * What AMP itself checks in the data of a rule groups namespace and of an alert manager definition, beyond what
 * Prometheus's tools check, and how the twin turns a definition into the config its Alertmanager runs.
 *
 * Sources: the AMP user guide ("Create an alert manager configuration", "Understand SNS receivers": SNS is the only
 * receiver; `topic_arn` and `sigv4.region` are required; `api_url` and `http_config` are not allowed, AMP sets them)
 * and the API reference (CreateRuleGroupsNamespace: namespace + rule group name at most 721 UTF-8 bytes).
 */

/** The data was refused: the message is the status reason AMP reports (CREATION_FAILED / UPDATE_FAILED). */
export class AmpDataRefusedError extends Error {
  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.name = 'AmpDataRefusedError';
  }
}

/** CreateRuleGroupsNamespace: "The combined length of a rule group namespace and a rule group name cannot exceed 721 UTF-8 bytes." */
const MAX_NAMESPACE_AND_GROUP_BYTES = 721;

/**
 * AMP's own checks of a rules file (the rest is promtool's): YAML with a `groups` list, and each group's name short
 * enough beside the namespace's. Throws AmpDataRefusedError with the reason.
 */
export function checkRuleGroupsNamespaceData(namespace: string, text: string): void {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new AmpDataRefusedError(`the rules file is not YAML: ${firstLine(error)}`, { cause: error });
  }
  const groups = isRecord(document) ? document.groups : undefined;
  if (!Array.isArray(groups)) throw new AmpDataRefusedError('the rules file must be a mapping with a `groups` list');
  for (const group of groups) {
    const name = isRecord(group) && typeof group.name === 'string' ? group.name : '';
    const bytes = Buffer.byteLength(namespace) + Buffer.byteLength(name);
    if (bytes > MAX_NAMESPACE_AND_GROUP_BYTES)
      throw new AmpDataRefusedError(
        `rule group ${JSON.stringify(name)}: the namespace and rule group names together are ${bytes} UTF-8 bytes; at most ${MAX_NAMESPACE_AND_GROUP_BYTES}`,
      );
  }
}

/** An alert manager definition, split as AMP reads it. */
export interface AlertManagerDefinitionParts {
  /** `alertmanager_config`, parsed. */
  config: Record<string, unknown>;
  /** `template_files`: template name → Go template text. */
  templateFiles: Record<string, string>;
}

const DEFINITION_KEYS = ['template_files', 'alertmanager_config'] as const;
/** A template name becomes a file name in the twin: no directories. */
const TEMPLATE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** SNS is the only receiver AMP supports; a receiver may also have none (it drops what reaches it). */
const RECEIVER_KEYS = ['name', 'sns_configs'];

/**
 * Parses an alert manager definition (`template_files` and `alertmanager_config`, the latter a YAML string) and
 * applies AMP's rules for it. Throws AmpDataRefusedError with the reason. Alertmanager's own checks come after (amtool
 * or Alertmanager's load).
 */
export function parseAlertManagerDefinition(text: string): AlertManagerDefinitionParts {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new AmpDataRefusedError(`the alert manager definition is not YAML: ${firstLine(error)}`, { cause: error });
  }
  if (!isRecord(document))
    throw new AmpDataRefusedError('the alert manager definition must be a mapping with `alertmanager_config`');
  const unknown = Object.keys(document).filter((key) => !(DEFINITION_KEYS as readonly string[]).includes(key));
  if (unknown.length > 0)
    throw new AmpDataRefusedError(
      `unknown top-level key(s) ${unknown.join(', ')}: the definition holds only template_files and alertmanager_config (all Alertmanager configuration goes inside alertmanager_config)`,
    );
  const rawConfig = document.alertmanager_config;
  if (typeof rawConfig !== 'string' || rawConfig.trim() === '')
    throw new AmpDataRefusedError(
      'alertmanager_config is required, as a string holding the Alertmanager configuration',
    );
  let config: unknown;
  try {
    config = parse(rawConfig);
  } catch (error) {
    throw new AmpDataRefusedError(`alertmanager_config is not YAML: ${firstLine(error)}`, { cause: error });
  }
  if (!isRecord(config)) throw new AmpDataRefusedError('alertmanager_config must hold a mapping');

  const templateFiles: Record<string, string> = {};
  const rawTemplates = document.template_files ?? {};
  if (!isRecord(rawTemplates))
    throw new AmpDataRefusedError('template_files must be a mapping of template name to template text');
  for (const [name, body] of Object.entries(rawTemplates)) {
    if (!TEMPLATE_NAME.test(name))
      throw new AmpDataRefusedError(`template_files: ${JSON.stringify(name)} is not a usable template name`);
    if (typeof body !== 'string') throw new AmpDataRefusedError(`template_files.${name} must be a string`);
    templateFiles[name] = body;
  }

  const receivers = config.receivers ?? [];
  if (!Array.isArray(receivers)) throw new AmpDataRefusedError('alertmanager_config: receivers must be a list');
  for (const receiver of receivers) {
    const name = isRecord(receiver) && typeof receiver.name === 'string' ? receiver.name : '?';
    if (!isRecord(receiver)) throw new AmpDataRefusedError(`receiver ${name}: must be a mapping`);
    const others = Object.keys(receiver).filter((key) => !RECEIVER_KEYS.includes(key));
    if (others.length > 0)
      throw new AmpDataRefusedError(
        `receiver ${name}: ${others.join(', ')} not supported; Amazon SNS (sns_configs) is the only receiver AMP supports`,
      );
    const snsConfigs = receiver.sns_configs ?? [];
    if (!Array.isArray(snsConfigs)) throw new AmpDataRefusedError(`receiver ${name}: sns_configs must be a list`);
    snsConfigs.forEach((sns: unknown, index) => {
      const where = `receiver ${name}, sns_configs[${index}]`;
      if (!isRecord(sns)) throw new AmpDataRefusedError(`${where}: must be a mapping`);
      for (const forbidden of ['api_url', 'http_config'])
        if (forbidden in sns) throw new AmpDataRefusedError(`${where}: ${forbidden} is not allowed (AMP sets it)`);
      if (typeof sns.topic_arn !== 'string' || sns.topic_arn === '')
        throw new AmpDataRefusedError(`${where}: topic_arn is required`);
      if (!isRecord(sns.sigv4) || typeof sns.sigv4.region !== 'string' || sns.sigv4.region === '')
        throw new AmpDataRefusedError(`${where}: sigv4.region is required`);
    });
  }
  return { config, templateFiles };
}

export interface TwinAlertmanagerTarget {
  /** The twin's SNS endpoint, `http://127.0.0.1:PORT`: every SNS receiver publishes there. */
  snsEndpoint: string;
  /** The directory the template files are written to. */
  templateDir: string;
}

/**
 * The Alertmanager config the twin runs for a definition: every SNS receiver gets `api_url` (the twin's SNS) and a
 * `sigv4` with only the region (AMP publishes as itself; the twin's Alertmanager signs with the twin's credentials from
 * its environment), and `templates` loads every file of `template_files`, as AMP's guide has a `default_template`
 * entry take effect by being there.
 */
export function twinAlertmanagerConfig(parts: AlertManagerDefinitionParts, target: TwinAlertmanagerTarget): string {
  const config = structuredClone(parts.config);
  for (const receiver of (config.receivers as unknown[] | undefined) ?? []) {
    for (const sns of ((receiver as Record<string, unknown>).sns_configs as Array<Record<string, unknown>>) ?? []) {
      sns.api_url = target.snsEndpoint;
      sns.sigv4 = { region: (sns.sigv4 as Record<string, unknown>).region };
    }
  }
  config.templates = [join(target.templateDir, '*')];
  return stringify(config);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
