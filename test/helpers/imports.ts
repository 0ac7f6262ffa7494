import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** The repository's root, where package.json is. */
export const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');

/** One relative import (or `export ... from`) of a module: the file it names, relative to the root. */
export interface ImportEdge {
  from: string;
  to: string;
  /** The specifier as written. */
  specifier: string;
  /** The names it imports (`{ a, b as c }` → a, b); undefined for a namespace, default or side-effect import. */
  names?: string[];
}

/** The TypeScript modules under the given folders (relative paths, `/`-separated). */
export function modulesUnder(folders: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir))) {
      const path = `${dir}/${entry}`;
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) found.push(path);
    }
  };
  for (const folder of folders) walk(folder);
  return found.sort();
}

/** Test files (`*.test.ts`) are leaves: nothing imports them. */
export function isTest(path: string): boolean {
  return path.endsWith('.test.ts');
}

/** Every relative import and re-export of the modules, resolved to the file it names (`.js` → `.ts`). */
export function importEdges(modules: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const from of modules) {
    const source = ts.createSourceFile(from, readFileSync(join(ROOT, from), 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const declaration =
        ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement) ? statement : undefined;
      const specifier = declaration?.moduleSpecifier;
      if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
      const target = resolve(ROOT, dirname(from), specifier.text.replace(/\.js$/, '.ts'));
      edges.push({
        from,
        to: relative(ROOT, target).split(sep).join('/'),
        specifier: specifier.text,
        ...namesOf(declaration as ts.ImportDeclaration | ts.ExportDeclaration),
      });
    }
  }
  return edges;
}

/** The names an import or re-export declaration takes from its module (none for `*`, default or bare imports). */
function namesOf(declaration: ts.ImportDeclaration | ts.ExportDeclaration): { names?: string[] } {
  if (ts.isImportDeclaration(declaration)) {
    const clause = declaration.importClause;
    const bindings = clause?.namedBindings;
    if (clause === undefined || clause.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings))
      return {};
    return { names: bindings.elements.map((e) => (e.propertyName ?? e.name).text) };
  }
  const clause = declaration.exportClause;
  if (clause === undefined || !ts.isNamedExports(clause)) return {};
  return { names: clause.elements.map((e) => (e.propertyName ?? e.name).text) };
}

/** The top-level names a module declares as exported (`export const x`, `export function f`, `export class C`, ...). */
export function exportedNames(module: string): string[] {
  const source = ts.createSourceFile(module, readFileSync(join(ROOT, module), 'utf8'), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement)
      ? (ts.getModifiers(statement) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
      : false;
    if (!exported) continue;
    if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement)) &&
      statement.name !== undefined
    )
      names.push(statement.name.text);
  }
  return names;
}

/** The folder a module is in. */
export function folderOf(path: string): string {
  return dirname(path);
}

/**
 * The strongly connected groups of more than one node in a directed graph (Tarjan): each is an import circle.
 * `nodes` are the graph's nodes; `next` gives a node's successors.
 */
export function circles(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter += 1;
    stack.push(node);
    onStack.add(node);
    for (const successor of next(node)) {
      if (!index.has(successor)) {
        visit(successor);
        low.set(node, Math.min(low.get(node) as number, low.get(successor) as number));
      } else if (onStack.has(successor)) {
        low.set(node, Math.min(low.get(node) as number, index.get(successor) as number));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop() as string;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const node of nodes) if (!index.has(node)) visit(node);
  return found;
}
