/** Configuration read once with zod: the targets, the AWS name formats, and the errors that name each bad field. */
export { REGION, REGION_PATTERN, STATE_MACHINE_ARN, TABLE_NAME, TOPIC_ARN, httpUrl, region } from './awsFormats.js';
export { parseEnvironmentWithTargets } from './environment.js';
export { ConfigInvalidError, type ConfigIssue } from './errors.js';
export {
  COMMON_TARGET_FIELDS,
  KNOWN_TARGET_FIELDS,
  TARGET_FIELDS,
  targetView,
  unknownTargetFields,
} from './targetFields.js';
export { TARGET_NAME_RULES, parseTargets, targetSchema, uniqueTargetList, type Target } from './targets.js';
export { formatPath, toConfigIssues } from './zodIssues.js';
