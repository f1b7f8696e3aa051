// Files of the package that the single executable (`npm run build:exe`, Node's single
// executable applications) carries as SEA assets, because nothing sits beside it: the control
// plane's Go sources (for `local-cluster` and `demo`) and examples/ (for `demo`).
//
// The build (tools/exe/build-exe.ts) stores each file under its path relative to the package
// root, plus an index asset listing those paths. Outside the executable every function here
// answers "nothing embedded", and callers use the files of the package instead.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The asset listing every embedded file: JSON `{ "files": ["tools/control-plane/main.go", …] }`. */
export const EMBEDDED_INDEX_KEY = 'kubelet-pods/embedded-files.json';

interface SeaModule {
  isSea(): boolean;
  getAsset(key: string): ArrayBuffer;
}

let seaModule: Promise<SeaModule | undefined> | undefined;

// node:sea exists from Node 20.12 on; it is imported lazily so that the package still loads
// on older Node 20 releases, where nothing can be embedded anyway.
function loadSea(): Promise<SeaModule | undefined> {
  seaModule ??= import('node:sea').then(
    (m) => (m.isSea() ? (m as SeaModule) : undefined),
    () => undefined,
  );
  return seaModule;
}

/** True when this process is the single executable. */
export async function isSingleExecutable(): Promise<boolean> {
  return (await loadSea()) !== undefined;
}

/**
 * The embedded files under `prefix` (a directory path relative to the package root, such as
 * `tools/control-plane`), keyed by their path relative to `prefix`; undefined outside the
 * single executable or when it carries nothing under `prefix`.
 */
export async function embeddedTree(prefix: string): Promise<Map<string, Buffer> | undefined> {
  const sea = await loadSea();
  if (sea === undefined) return undefined;
  let index: { files: string[] };
  try {
    index = JSON.parse(Buffer.from(sea.getAsset(EMBEDDED_INDEX_KEY)).toString('utf8')) as { files: string[] };
  } catch {
    return undefined; // an executable built without embedded files
  }
  const base = `${prefix.replace(/\/+$/, '')}/`;
  const tree = new Map<string, Buffer>();
  for (const file of index.files) {
    if (file.startsWith(base)) tree.set(file.slice(base.length), Buffer.from(sea.getAsset(file)));
  }
  return tree.size > 0 ? tree : undefined;
}

/** A short hash of a tree's paths and contents, to name the directory it is extracted to. */
export function treeHash(tree: ReadonlyMap<string, Buffer>): string {
  const hash = createHash('sha256');
  for (const name of [...tree.keys()].sort()) hash.update(name).update('\0').update(tree.get(name)!).update('\0');
  return hash.digest('hex').slice(0, 16);
}

/** Writes `tree` under `dir` (which must not exist yet or be empty). */
export async function writeTree(tree: ReadonlyMap<string, Buffer>, dir: string): Promise<void> {
  for (const [name, content] of tree) {
    const path = join(dir, name);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, content);
  }
}

/**
 * Extracts the embedded files under `prefix` into `<parentDir>/<name>-<hash of the files>` and
 * returns that directory, or undefined when nothing is embedded under `prefix`. An existing
 * extraction of the same files is reused; a new one is written under a temporary name and
 * renamed into place, so a crashed or concurrent run never leaves a half-written tree where
 * another would use it.
 */
export async function extractEmbeddedTree(prefix: string, parentDir: string, name: string): Promise<string | undefined> {
  const tree = await embeddedTree(prefix);
  if (tree === undefined) return undefined;
  const target = join(parentDir, `${name}-${treeHash(tree)}`);
  if (existsSync(target)) return target;
  const temp = `${target}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await writeTree(tree, temp);
    await rename(temp, target);
  } catch (err) {
    // Another process may have renamed the same tree into place first.
    if (!existsSync(target)) throw err;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return target;
}
