// The single executable's embedded package files (src/sea/embedded-files.ts) outside the
// executable, and the property the executable's `local-cluster` relies on: Go sources written
// out from the embedded tree hash to the same cache key as the checkout's.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { goSourceHash } from '../../../src/cluster/go-tool-build.js';
import {
  embeddedTree,
  extractEmbeddedTree,
  isSingleExecutable,
  treeHash,
  writeTree,
} from '../../../src/sea/embedded-files.js';

const CONTROL_PLANE = fileURLToPath(new URL('../../../../tools/control-plane/', import.meta.url));
const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

it('outside the single executable nothing is embedded, and nothing is extracted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-sea-'));
  dirs.push(dir);
  assert.equal(await isSingleExecutable(), false);
  assert.equal(await embeddedTree('tools/control-plane'), undefined);
  assert.equal(await extractEmbeddedTree('tools/control-plane', dir, 'control-plane'), undefined);
  assert.deepEqual(await readdir(dir), []);
});

it('the control plane sources written from a tree keep the checkout’s cache key, which is also the tree’s hash', async () => {
  const tree = new Map<string, Buffer>();
  for (const name of await readdir(CONTROL_PLANE)) {
    if (name.endsWith('.go') || name === 'go.mod' || name === 'go.sum') tree.set(name, await readFile(join(CONTROL_PLANE, name)));
  }
  const dir = await mkdtemp(join(tmpdir(), 'kp-sea-'));
  dirs.push(dir);
  await writeTree(tree, join(dir, 'control-plane'));
  const checkout = await goSourceHash(CONTROL_PLANE);
  assert.equal(await goSourceHash(join(dir, 'control-plane')), checkout);
  assert.equal(treeHash(tree), checkout);
});

it('writeTree creates the directories of nested paths', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-sea-'));
  dirs.push(dir);
  await writeTree(new Map([['kubelet-config.yaml', Buffer.from('a')], ['manifests/web.yaml', Buffer.from('b')]]), dir);
  assert.equal(await readFile(join(dir, 'manifests/web.yaml'), 'utf8'), 'b');
  assert.equal(await readFile(join(dir, 'kubelet-config.yaml'), 'utf8'), 'a');
});
