// What the differential tests of mirror pods share: the corpus as subjects, the optional dump of
// each normalised pair, and the check of what was found against docs/kubelet-differences.md.
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';

import { parse } from 'yaml';

import { compareArea, describeDifference, parseListedDifferences, reconcile, type Json } from './compare.js';

export const DIFFERENCES_DOC = fileURLToPath(new URL('../../../docs/kubelet-differences.md', import.meta.url));

/** One pod of the corpus; files that define the same pod are one subject (`a.yaml+a.yaml.bak`). */
export interface CorpusEntry {
  subject: string;
  namespace: string;
  name: string;
}

export interface Pair {
  subject: string;
  real: Json | undefined;
  ours: Json | undefined;
}

/**
 * One pair per corpus subject: the mirror each side holds for it (keyed `namespace/name-node`),
 * normalised for that side, or undefined where a side has none.
 */
export function pairMirrors<S extends { nodeName: string }, P>(
  corpus: readonly CorpusEntry[],
  sides: { real: S; ours: S },
  mirrors: { real: Map<string, P>; ours: Map<string, P> },
  normalise: (pod: P, side: S) => Json,
): Pair[] {
  return corpus.map((c) => {
    const pick = (found: Map<string, P>, side: S): Json | undefined => {
      const pod = found.get(`${c.namespace}/${c.name}-${side.nodeName}`);
      return pod === undefined ? undefined : normalise(pod, side);
    };
    return { subject: c.subject, real: pick(mirrors.real, sides.real), ours: pick(mirrors.ours, sides.ours) };
  });
}

/** Every file of `dirs` that is not hidden, as both agents read a manifest directory, in name order. */
export async function readCorpus(dirs: readonly string[]): Promise<CorpusEntry[]> {
  const files: Array<{ dir: string; file: string }> = [];
  for (const dir of dirs) for (const file of await readdir(dir)) if (!file.startsWith('.')) files.push({ dir, file });
  files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const byPod = new Map<string, { namespace: string; name: string; files: string[] }>();
  for (const { dir, file } of files) {
    const manifest = parse(await readFile(join(dir, file), 'utf8')) as { metadata?: { name?: string; namespace?: string } };
    const namespace = manifest.metadata?.namespace ?? 'default';
    const name = manifest.metadata!.name!;
    const entry = byPod.get(`${namespace}/${name}`) ?? { namespace, name, files: [] };
    entry.files.push(file);
    byPod.set(`${namespace}/${name}`, entry);
  }
  return [...byPod.values()].map((e) => ({ subject: e.files.join('+'), namespace: e.namespace, name: e.name }));
}

// DIFFERENTIAL_DUMP=<dir> writes each normalised pair to <dir>/<area>/<subject>.{real,ours}.json.
export async function dumpPairs(area: string, pairs: readonly Pair[]): Promise<void> {
  const root = process.env['DIFFERENTIAL_DUMP'];
  if (root === undefined || root === '') return;
  await mkdir(join(root, area), { recursive: true });
  for (const { subject, real, ours } of pairs) {
    await writeFile(join(root, area, `${subject}.real.json`), `${JSON.stringify(real ?? null, null, 2)}\n`);
    await writeFile(join(root, area, `${subject}.ours.json`), `${JSON.stringify(ours ?? null, null, 2)}\n`);
  }
}

/**
 * The differences `pairs` show in `area` must be exactly the rows of that area in
 * docs/kubelet-differences.md: a new one fails, and so does a listed one no longer seen.
 */
export async function assertListedDifferences(t: TestContext, area: string, pairs: readonly Pair[]): Promise<void> {
  await dumpPairs(area, pairs);
  const found = compareArea(area, pairs);
  for (const d of found) t.diagnostic(describeDifference(d));
  const listed = parseListedDifferences(await readFile(DIFFERENCES_DOC, 'utf8'));
  const { unlisted, stale } = reconcile(found, listed, [area]);
  assert.deepEqual(
    unlisted.map(describeDifference),
    [],
    'differences from the real kubelet that docs/kubelet-differences.md does not list (fix them or list them with their reason)',
  );
  assert.deepEqual(stale, [], 'listed differences that no longer occur: remove them from docs/kubelet-differences.md');
}
