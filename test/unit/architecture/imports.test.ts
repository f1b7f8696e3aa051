// The import rule of docs/architecture.md, enforced: the table "Folders and what they may
// import" is read from the doc itself, so the doc and the check cannot drift apart.
//
// Why a test over the import graph rather than ESLint (import/no-cycle,
// import/no-restricted-paths, eslint-plugin-boundaries): the repository has no ESLint, and
// those would be new dependencies holding a second copy of the rule in a config file. This
// test needs only the TypeScript compiler the build already uses (its import scanner, which
// skips comments and strings and sees `import type`, `export … from` and `import()`), runs in
// a moment with the unit tests, and its messages name the row of the doc to change.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SRC = join(ROOT, 'src');
const DOC = 'docs/architecture.md';
const SECTION = '## Folders and what they may import';

/** A row of the table: a folder (`name/`), a top-level file (`name.ts`), several, or `*`. */
interface Row {
  readonly names: readonly string[];
  readonly job: string;
  readonly mayImport: readonly string[];
  /** Its line in the doc, for the messages. */
  readonly line: number;
}

/** One import seen in src/, as the messages quote it. */
interface Evidence {
  readonly file: string;
  readonly line: number;
  readonly specifier: string;
}

const NAME = /^(\*|[a-z0-9-]+\/|[a-z0-9-]+\.ts)$/;
const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const cellsOf = (line: string): string[] => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());

function readTable(): Row[] {
  const lines = readFileSync(join(ROOT, DOC), 'utf8').split('\n');
  const heading = lines.findIndex((l) => l.trim() === SECTION);
  assert.ok(heading >= 0, `${DOC} has no "${SECTION}" section: the import rule is read from its table`);
  let i = heading + 1;
  while (i < lines.length && !lines[i]!.startsWith('|') && !lines[i]!.startsWith('## ')) i++;
  assert.deepEqual(cellsOf(lines[i] ?? ''), ['folder', 'its one job', 'may import'], `${DOC}:${i + 1}: the table under "${SECTION}" must have the columns folder | its one job | may import`);
  const rows: Row[] = [];
  for (i += 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
    const [names = '', job = '', mayImport = ''] = cellsOf(lines[i]!);
    const row = { names: backticked(names), job, mayImport: backticked(mayImport), line: i + 1 };
    for (const name of [...row.names, ...row.mayImport]) {
      assert.match(name, NAME, `${DOC}:${row.line}: \`${name}\` is neither a folder (\`name/\`), a top-level file of src/ (\`name.ts\`) nor \`*\``);
    }
    assert.ok(row.names.length > 0, `${DOC}:${row.line}: the first cell names no folder`);
    rows.push(row);
  }
  for (; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    assert.ok(!lines[i]!.startsWith('|'), `${DOC}:${i + 1}: a row below the end of the table under "${SECTION}" (a blank line splits a Markdown table)`);
  }
  return rows;
}

/** The folder (`name/`) or top-level file (`name.ts`) of src/ a path belongs to; undefined outside src/. */
function unitOf(path: string): string | undefined {
  const rel = relative(SRC, path);
  if (rel.startsWith('..') || rel === '') return undefined;
  const parts = rel.split(sep);
  return parts.length > 1 ? `${parts[0]}/` : parts[0]!.replace(/\.js$/, '.ts');
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Every unit of src/, and between units, the imports that make each edge. */
function readGraph(): { units: Set<string>; edges: Map<string, Map<string, Evidence[]>> } {
  const units = new Set<string>();
  const edges = new Map<string, Map<string, Evidence[]>>();
  for (const file of sourceFiles(SRC)) {
    const from = unitOf(file)!;
    units.add(from);
    const text = readFileSync(file, 'utf8');
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const to = unitOf(resolve(dirname(file), ref.fileName));
      if (to === undefined || to === from) continue;
      const byTarget = edges.get(from) ?? new Map<string, Evidence[]>();
      edges.set(from, byTarget);
      const evidence = byTarget.get(to) ?? [];
      byTarget.set(to, evidence);
      evidence.push({ file: relative(ROOT, file), line: text.slice(0, ref.pos).split('\n').length, specifier: ref.fileName });
    }
  }
  return { units, edges };
}

const quote = (e: Evidence): string => `${e.file}:${e.line} imports '${e.specifier}'`;

/** The cycles of a graph, each once, as the list of its nodes (the first repeated at the end). */
function cycles(graph: ReadonlyMap<string, Iterable<string>>): string[][] {
  const found = new Map<string, string[]>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of [...(graph.get(node) ?? [])].sort()) {
      if (state.get(next) === 'open') {
        const cycle = stack.slice(stack.indexOf(next));
        // One rotation per cycle: starting from its smallest name.
        const start = cycle.indexOf([...cycle].sort()[0]!);
        const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
        found.set(rotated.join(' '), [...rotated, rotated[0]!]);
      } else if (state.get(next) === undefined) {
        visit(next);
      }
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (state.get(node) === undefined) visit(node);
  return [...found.values()];
}

describe('the import rule of docs/architecture.md', () => {
  const rows = readTable();
  const { units, edges } = readGraph();
  const rowOf = new Map(rows.flatMap((row) => row.names.map((name) => [name, row] as const)));
  const everyRow = rowOf.get('*');
  const foundation = new Set(everyRow?.mayImport ?? []);
  const allowed = (unit: string): Set<string> => {
    const own = rowOf.get(unit)?.mayImport ?? [];
    return new Set(foundation.has(unit) || unit === '*' ? own : [...own, ...foundation]);
  };
  const rowRef = (unit: string): string => `the row \`${unit}\` (${DOC}:${rowOf.get(unit)?.line ?? '?'})`;

  it('sees the imports of src/', () => {
    assert.ok(edges.get('agent/')?.has('pod/'), 'the scanner found no import of pod/ in src/agent/: it reads nothing');
  });

  it('has one row for every folder and top-level file of src/, and no row for something else', () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      for (const name of row.names) {
        if (seen.has(name)) problems.push(`${DOC}:${row.line}: \`${name}\` has a second row; keep one`);
        seen.add(name);
        if (name !== '*' && !units.has(name) && !/\bplanned\b/i.test(row.job)) {
          problems.push(`${DOC}:${row.line}: the row \`${name}\` names nothing in src/; remove it, or say "(planned)" in its job cell`);
        }
      }
      for (const target of row.mayImport) {
        if (!rowOf.has(target)) problems.push(`${DOC}:${row.line}: \`${target}\` in the "may import" cell has no row of its own`);
      }
    }
    if (everyRow === undefined) problems.push(`${DOC}: the table has no \`*\` row (what every row may import: the foundation)`);
    for (const unit of [...units].sort()) {
      if (rowOf.has(unit)) continue;
      const today = [...(edges.get(unit)?.keys() ?? [])].filter((t) => !foundation.has(t)).sort();
      problems.push(
        `src/${unit} has no row in the table under "${SECTION}" of ${DOC}: add ` +
          `| \`${unit}\` | its one job | ${today.map((t) => `\`${t}\``).join(', ') || '—'} |  (its imports today besides the foundation)`,
      );
    }
    if (problems.length > 0) assert.fail(problems.join('\n'));
  });

  it('has no import between folders that the table does not allow', () => {
    const problems: string[] = [];
    for (const [from, targets] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
      if (!rowOf.has(from)) continue; // reported by the test above
      const ok = allowed(from);
      for (const [to, evidence] of [...targets].sort(([a], [b]) => a.localeCompare(b))) {
        if (ok.has(to)) continue;
        problems.push(
          `${from} may not import ${to}: ${evidence.map(quote).join('; ')}.\n` +
            `  Move the code so that the import is not needed, or, if ${from} should depend on ${to}, add \`${to}\` to the "may import" cell of ${rowRef(from)}.`,
        );
      }
    }
    if (problems.length > 0) assert.fail(problems.join('\n'));
  });

  it('has no import cycle between folders', () => {
    const graph = new Map([...edges].map(([from, targets]) => [from, targets.keys()] as const));
    const problems = cycles(graph).map((cycle) => {
      const steps = cycle.slice(1).map((to, i) => `  ${cycle[i]} → ${to}: ${quote(edges.get(cycle[i]!)!.get(to)![0]!)}`);
      return `import cycle between folders: ${cycle.join(' → ')}\n${steps.join('\n')}\n` +
        `  Break it: move what one side needs into a folder both may import (values/ for plain values), then drop the import and its entry in that row's "may import" cell.`;
    });
    if (problems.length > 0) assert.fail(problems.join('\n'));
  });

  it('is a layering: the table itself allows no cycle', () => {
    const graph = new Map([...rowOf.keys()].filter((n) => n !== '*').map((name) => [name, [...allowed(name)].filter((t) => t !== name)] as const));
    const problems = cycles(graph).map((cycle) =>
      `the table allows the cycle ${cycle.join(' → ')}; take one step of it out of the "may import" cell of its row (${cycle.slice(0, -1).map(rowRef).join(', ')})`,
    );
    if (problems.length > 0) assert.fail(problems.join('\n'));
  });
});
