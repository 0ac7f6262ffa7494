import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import type * as z from 'zod';
import { type Profile, profileSchema } from './profile.js';
import { ProfileInvalidError, type ProfileIssue, ProfileNotFoundError, ProfileParseError } from './errors.js';

/** The profiles shipped in sim/profile/profiles/ (`<name>.yaml`). */
export const BUILT_IN_PROFILES = ['demo', 'ministral-8b-l40s'] as const;
export type BuiltInProfileName = (typeof BUILT_IN_PROFILES)[number];

const PROFILES_DIR = fileURLToPath(new URL('./profiles/', import.meta.url));
const FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

type PlainObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBuiltIn(name: string): name is BuiltInProfileName {
  return (BUILT_IN_PROFILES as readonly string[]).includes(name);
}

/**
 * Loads a twin profile: a built-in name (`demo`, `ministral-8b-l40s`) or a path to a .yaml/.yml/.json file.
 * A file may say `extends: <built-in name>` and override any field; objects are merged key by key, everything
 * else (numbers, strings, lists) replaces the built-in's value. The result is validated by the strict schema.
 */
export async function loadProfile(nameOrPath: string): Promise<Profile> {
  const { source, raw } = await readProfileSource(nameOrPath);
  const merged = await resolveExtends(raw, source, new Set([source]));
  return validateProfile(merged, source);
}

/** Validates a profile object (already merged), throwing ProfileInvalidError with every issue. */
export function validateProfile(input: unknown, source: string): Profile {
  const result = profileSchema.safeParse(input);
  if (result.success) return result.data;
  throw new ProfileInvalidError(
    source,
    result.error.issues.map((issue) => describeIssue(issue, input)),
  );
}

async function readProfileSource(nameOrPath: string): Promise<{ source: string; raw: PlainObject }> {
  if (isBuiltIn(nameOrPath)) {
    const file = path.join(PROFILES_DIR, `${nameOrPath}.yaml`);
    return { source: `built-in "${nameOrPath}" (${file})`, raw: await readProfileFile(file, nameOrPath) };
  }
  const looksLikePath = FILE_EXTENSIONS.some((ext) => nameOrPath.toLowerCase().endsWith(ext));
  if (!looksLikePath) {
    throw new ProfileNotFoundError(
      `Unknown profile "${nameOrPath}": give a built-in name (${BUILT_IN_PROFILES.join(', ')}) ` +
        `or a path to a ${FILE_EXTENSIONS.join('/')} file`,
      nameOrPath,
      BUILT_IN_PROFILES,
    );
  }
  const file = path.resolve(nameOrPath);
  return { source: `"${file}"`, raw: await readProfileFile(file, nameOrPath) };
}

async function readProfileFile(file: string, asked: string): Promise<PlainObject> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new ProfileNotFoundError(
        `Profile file "${file}" does not exist (built-in profiles: ${BUILT_IN_PROFILES.join(', ')})`,
        asked,
        BUILT_IN_PROFILES,
        { cause: error },
      );
    }
    throw new ProfileParseError(`Profile file "${file}" cannot be read: ${(error as Error).message}`, asked, {
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    // YAML is a superset of JSON: one parser for both, which refuses a duplicate key in either (JSON.parse keeps the
    // last one silently).
    parsed = parseYaml(text);
  } catch (error) {
    throw syntaxError(file, text, asked, error);
  }
  if (!isPlainObject(parsed)) {
    throw new ProfileParseError(
      `Profile file "${file}" must contain a mapping of profile fields at its top level, not ${describeValue(parsed)}`,
      asked,
    );
  }
  return parsed;
}

/**
 * The parser's error in one line: `file:line:col` (what an editor opens), what is wrong, and for a duplicate key the
 * key; never the parser's code frame.
 */
function syntaxError(file: string, text: string, asked: string, error: unknown): ProfileParseError {
  const first = ((error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '').trim();
  if (!(error instanceof YAMLParseError))
    return new ProfileParseError(`Profile file "${file}" is not valid YAML or JSON: ${first}`, asked, { cause: error });
  const what = first.replace(/ at line \d+, column \d+:?$/, '');
  const key = error.code === 'DUPLICATE_KEY' ? keyAt(text, error.pos[0]) : undefined;
  const duplicate = key === undefined ? '' : ` (key "${key}" appears more than once)`;
  const at = error.linePos?.[0];
  const where = at === undefined ? `"${file}"` : `${file}:${at.line}:${at.col}`;
  return new ProfileParseError(`Profile file ${where} is not valid YAML or JSON: ${what}${duplicate}`, asked, {
    cause: error,
  });
}

/** The mapping key written at `offset`: plain (`replicas:`) or quoted (`"replicas":`, as JSON writes it). */
function keyAt(text: string, offset: number): string | undefined {
  const match = /^(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s:#][^:#\n]*?))\s*:/.exec(text.slice(offset));
  return match === null ? undefined : (match[1] ?? match[2] ?? match[3]);
}

/** A value as a message shows it: NaN and ±Infinity as such (JSON would print null), nothing as "an empty file". */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty file';
  if (Array.isArray(value)) return 'a list';
  return `a ${typeof value} (${formatValue(value)})`;
}

function formatValue(value: unknown): string {
  return typeof value === 'number' && !Number.isFinite(value) ? String(value) : JSON.stringify(value);
}

async function resolveExtends(raw: PlainObject, source: string, seen: Set<string>): Promise<PlainObject> {
  const { extends: parent, ...own } = raw;
  if (parent === undefined) return own;
  if (typeof parent !== 'string' || !isBuiltIn(parent)) {
    throw new ProfileInvalidError(source, [
      {
        path: 'extends',
        message: `must name a built-in profile (${BUILT_IN_PROFILES.join(', ')}), got ${JSON.stringify(parent)}`,
      },
    ]);
  }
  const base = await readProfileSource(parent);
  if (seen.has(base.source)) {
    throw new ProfileInvalidError(source, [{ path: 'extends', message: `"${parent}" extends itself in a cycle` }]);
  }
  seen.add(base.source);
  const resolvedBase = await resolveExtends(base.raw, base.source, seen);
  return deepMerge(resolvedBase, own);
}

/** Objects merge key by key; any other value in `override` replaces the base's. */
function deepMerge(base: PlainObject, override: PlainObject): PlainObject {
  const merged: PlainObject = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

function formatPath(segments: readonly PropertyKey[]): string {
  let text = '';
  for (const segment of segments) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? String(segment) : `.${String(segment)}`;
  }
  return text === '' ? '(top level)' : text;
}

function valueAt(input: unknown, segments: readonly PropertyKey[]): unknown {
  let current = input;
  for (const segment of segments) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

/** The keys the schema accepts at a path (through defaults and optionals), for "unknown key" messages. */
function acceptedKeysAt(segments: readonly PropertyKey[]): string[] {
  let schema: z.core.$ZodType = profileSchema;
  for (const segment of [...segments, undefined]) {
    for (;;) {
      const def = schema._zod.def as { type: string; innerType?: z.core.$ZodType };
      if ((def.type === 'default' || def.type === 'optional' || def.type === 'prefault') && def.innerType) {
        schema = def.innerType;
        continue;
      }
      break;
    }
    const def = schema._zod.def as { type: string; shape?: Record<string, z.core.$ZodType> };
    if (def.type !== 'object' || def.shape === undefined) return [];
    if (segment === undefined) return Object.keys(def.shape);
    const next = def.shape[String(segment)];
    if (next === undefined) return [];
    schema = next;
  }
  return [];
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): ProfileIssue {
  if (issue.code === 'unrecognized_keys') {
    const keys = issue.keys.map((key) => `"${key}"`).join(', ');
    const accepted = acceptedKeysAt(issue.path);
    return {
      path: formatPath(issue.path),
      message:
        `unknown key${issue.keys.length > 1 ? 's' : ''} ${keys}` +
        (accepted.length > 0 ? ` (accepted: ${accepted.join(', ')})` : ''),
    };
  }
  const received = valueAt(input, issue.path);
  const got = received === undefined ? 'missing' : `got ${formatValue(received)}`;
  return { path: formatPath(issue.path), message: `${issue.message} (${got})` };
}
