// The manifest cache's reads: the stat's size sizes only the first read, so a file that grew
// or shrank after its stat is still read as it is now.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_CONFIG_LENGTH } from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import { createManifestCache } from '../../../src/sources/manifest-cache.js';
import { noopLogger } from '../../../src/logger.js';
import { realClock } from '../../../src/time/clock.js';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempFile(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kp-manifest-cache-'));
  dirs.push(dir);
  return join(dir, 'pod.yaml');
}

const manifest = (note: string): string =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\n  annotations:\n    note: "${note}"\nspec:\n  containers:\n  - name: c\n    image: busybox\n`;

test('a manifest that grew after its stat is read to its end, not cut at the stat size', async () => {
  const path = await tempFile();
  await writeFile(path, manifest('short'));
  const staleInfo = await stat(path);
  const note = 'x'.repeat(200_000);
  await writeFile(path, manifest(note));
  const cache = createManifestCache({ nodeName: 'n', clock: realClock, logger: noopLogger });
  assert.equal(await cache.update(path, staleInfo), true);
  const [pod] = cache.pods().pods;
  assert.equal(pod?.metadata?.annotations?.note, note, 'the whole grown file was parsed');
});

test('a manifest that grew past the limit after its stat is refused as too large', async () => {
  const path = await tempFile();
  await writeFile(path, manifest('short'));
  const staleInfo = await stat(path);
  await writeFile(path, manifest('x'.repeat(MAX_CONFIG_LENGTH)));
  const refused: unknown[] = [];
  const cache = createManifestCache({ nodeName: 'n', clock: realClock, logger: noopLogger, onRejected: (_p, err) => refused.push(err) });
  await cache.update(path, staleInfo);
  assert.deepEqual(cache.pods().pods, []);
  assert.equal(refused.length, 1);
  assert.ok(hasErrorCode(refused[0], 'KP_ERR_SOURCE_FILE_TOO_LARGE'));
});

test('a manifest that shrank after its stat is read as it is now', async () => {
  const path = await tempFile();
  await writeFile(path, manifest('y'.repeat(5_000)));
  const staleInfo = await stat(path);
  await writeFile(path, manifest('short'));
  const cache = createManifestCache({ nodeName: 'n', clock: realClock, logger: noopLogger });
  await cache.update(path, staleInfo);
  assert.equal(cache.pods().pods[0]?.metadata?.annotations?.note, 'short');
});
