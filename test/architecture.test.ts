import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import {
  circles,
  exportedNames,
  folderOf,
  importEdges,
  isTest,
  modulesUnder,
  ROOT,
  type ImportEdge,
} from './helpers/imports.js';

// The house rules of the repository's layout (docs/adr/0014), checked on the import graph of every module. A test
// file may use its concept together with the concept's sub-folders, so test files are left out of the circle and
// face rules (nothing imports a test file: it cannot close a circle of modules).

const ALL = modulesUnder(['shared', 'sim', 'functions', 'cli', 'bench', 'test', 'infra']);
const EDGES = importEdges(ALL);
const modules = (prefix: string) => ALL.filter((path) => path.startsWith(`${prefix}/`) && !isTest(path));
const edgesFrom = (prefix: string, options: { tests: boolean }) =>
  EDGES.filter((e) => e.from.startsWith(`${prefix}/`) && (options.tests || !isTest(e.from)));
const show = (edges: readonly ImportEdge[]) => edges.map((e) => `${e.from} → ${e.to}`);

/** The import circles among the folders (one node per folder) of the modules under `prefix`. */
function folderCircles(prefix: string): string[][] {
  const next = new Map<string, Set<string>>();
  for (const edge of edgesFrom(prefix, { tests: false })) {
    const [from, to] = [folderOf(edge.from), folderOf(edge.to)];
    if (from === to || !to.startsWith(`${prefix}/`)) continue;
    next.set(from, (next.get(from) ?? new Set()).add(to));
  }
  return circles(new Set(modules(prefix).map(folderOf)), (folder) => next.get(folder) ?? []);
}

/** The import circles among the modules (one node per file) under `prefix`. */
function moduleCircles(prefix: string): string[][] {
  const next = new Map<string, string[]>();
  for (const edge of edgesFrom(prefix, { tests: false }))
    next.set(edge.from, [...(next.get(edge.from) ?? []), edge.to]);
  return circles(modules(prefix), (module) => next.get(module) ?? []);
}

describe('Layout: the import graph', () => {
  it.each(['shared', 'sim'])('%s: no folder takes part in an import circle', (prefix) => {
    expect(folderCircles(prefix)).toEqual([]);
  });

  it.each(['shared', 'sim', 'functions', 'cli'])('%s: no module takes part in an import circle', (prefix) => {
    expect(moduleCircles(prefix)).toEqual([]);
  });

  it('the domain (shared/) imports nothing from functions/, cli/, sim/, bench/, test/ or infra/', () => {
    const outward = edgesFrom('shared', { tests: false }).filter((e) => !e.to.startsWith('shared/'));
    expect(show(outward)).toEqual([]);
  });

  it('the functions import only the domain and their own shared entry code, never the twin or the CLI', () => {
    const outward = edgesFrom('functions', { tests: false }).filter(
      (e) => !e.to.startsWith('shared/') && !e.to.startsWith('functions/'),
    );
    expect(show(outward)).toEqual([]);
  });

  it('cli/, bench/, test/ and the product’s tests reach the twin through the harness room only (sim/harness/)', () => {
    const callers = EDGES.filter(
      (e) =>
        e.to.startsWith('sim/') &&
        !e.from.startsWith('sim/') &&
        // The product's own unit tests start parts of the twin (an SNS endpoint, dynalite) through the harness too.
        (['cli/', 'bench/', 'test/', 'infra/'].some((room) => e.from.startsWith(room)) || isTest(e.from)),
    );
    expect(callers.length).toBeGreaterThan(20);
    expect(show(callers.filter((e) => !e.to.startsWith('sim/harness/')))).toEqual([]);
  });

  it('a caller outside a concept folder of shared/ imports it through its face (index.ts), not its files', () => {
    const throughFiles = EDGES.filter((e) => {
      if (!e.to.startsWith('shared/') || e.to.endsWith('/index.ts')) return false;
      // testing/ holds the tests' fakes and fixtures, not the concept's surface.
      if (e.to.includes('/testing/')) return false;
      // Inside the folder, or below it: a concept's own modules import each other's files.
      return !e.from.startsWith(`${folderOf(e.to)}/`);
    });
    expect(show(throughFiles)).toEqual([]);
  });

  it('no module imports its own folder’s face (a circle through index.ts)', () => {
    const ownFace = EDGES.filter(
      (e) => e.to.endsWith('/index.ts') && folderOf(e.to) === folderOf(e.from) && !e.from.endsWith('/index.ts'),
    );
    expect(show(ownFace.filter((e) => !isTest(e.from)))).toEqual([]);
  });

  it('every concept folder of shared/ has a face', () => {
    const folders = [...new Set(modules('shared').map(folderOf))].filter((folder) => !folder.endsWith('/testing'));
    expect(folders.filter((folder) => !existsSync(join(ROOT, folder, 'index.ts')))).toEqual([]);
  });

  it('nothing in shared/ is there only for the twin: every domain module serves functions/, cli/ or infra/', () => {
    // Walk the graph from the product's entry points (never into sim/): what the local runner alone uses is found.
    // Through a face, only to the modules that define the names imported.
    const definedIn = new Map<string, string>();
    for (const module of modules('shared'))
      for (const name of exportedNames(module)) definedIn.set(`${folderOf(module)} ${name}`, module);
    const targetsOf = (edge: ImportEdge): string[] => {
      if (!edge.to.endsWith('/index.ts') || edge.names === undefined) return [edge.to];
      return edge.names.map((name) => definedIn.get(`${folderOf(edge.to)} ${name}`) ?? edge.to);
    };
    const next = new Map<string, string[]>();
    for (const edge of EDGES) next.set(edge.from, [...(next.get(edge.from) ?? []), ...targetsOf(edge)]);
    const seen = new Set<string>();
    const queue = [...modules('functions'), ...modules('cli'), ...modules('infra')];
    while (queue.length > 0) {
      const module = queue.pop() as string;
      if (seen.has(module) || module.startsWith('sim/')) continue;
      seen.add(module);
      queue.push(...(next.get(module) ?? []));
    }
    const unused = modules('shared').filter(
      (m) => !seen.has(m) && !m.includes('/testing/') && !m.endsWith('/index.ts'),
    );
    expect(unused).toEqual([]);
  });
});
