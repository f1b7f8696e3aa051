// The fleet's file watch hub: one watch per path for many sources, and the re-lists of one
// path shared while nothing can have changed (src/fleet/file-watch-hub.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createFileWatchHub } from '../../../src/fleet/file-watch-hub.js';
import type { PathReading } from '../../../src/sources/file-source.js';
import { createFileSource } from '../../../src/sources/file-source.js';
import type { WatchListener, WatchStaticPodPath } from '../../../src/sources/file-watch.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { podManifestYaml } from '../../helpers/manifests.js';
import { waitFor } from '../../helpers/wait.js';

/** A watch that the test fires by hand; counts the watchers made. */
function fakeWatch(): { watch: WatchStaticPodPath; fire: (name: string | null) => void; fail: () => void; made: () => number } {
  const listeners: { listener: WatchListener; onError: (err: Error) => void }[] = [];
  return {
    watch: (_root, _isDir, listener, onError) => {
      listeners.push({ listener, onError });
      return { close: () => undefined };
    },
    fire: (name) => listeners.forEach((l) => l.listener(name)),
    fail: () => listeners.forEach((l) => l.onError(new Error('watch died'))),
    made: () => listeners.length,
  };
}

describe('createFileWatchHub', () => {
  const root = '/manifests';
  const reader = (): { read: () => Promise<PathReading>; reads: () => number } => {
    let reads = 0;
    return { read: async () => (reads++, { info: {} as never, files: [] }), reads: () => reads };
  };

  it('hands a listing of a watched path to the sources that list it within shareMs', async () => {
    const clock = new FakeClock();
    const w = fakeWatch();
    const hub = createFileWatchHub(w.watch, { clock, shareMs: 1000 });
    for (let i = 0; i < 3; i++) hub.watchPath(root, true, () => undefined, () => undefined);
    assert.equal(w.made(), 1, 'one watcher for three sources');
    const r = reader();
    const first = hub.shareReading(root, r.read);
    assert.equal(await hub.shareReading(root, r.read), await first);
    await clock.advance(1000);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 1, 'up to shareMs after it started, the listing is handed out');
    await clock.advance(1);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 2, 'an older listing is not');
  });

  it('lists afresh after a watch event for the path, after a watch failure, and when the path is not watched', async () => {
    const clock = new FakeClock();
    const w = fakeWatch();
    const hub = createFileWatchHub(w.watch, { clock });
    const r = reader();
    await hub.shareReading(root, r.read);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 2, 'without a watch of the path, a change could go unseen: every listing reads');

    const handle = hub.watchPath(root, true, () => undefined, () => undefined);
    await hub.shareReading(root, r.read);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 3);
    w.fire('p0.yaml');
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 4, 'a watch event makes the next listing a fresh one');
    w.fire(null);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 5);
    w.fail();
    await hub.shareReading(root, r.read);
    await hub.shareReading(root, r.read);
    assert.equal(r.reads(), 7, 'a dead watch shares nothing');
    handle.close();
  });

  it('does not hand on a failed listing', async () => {
    const hub = createFileWatchHub(fakeWatch().watch, { clock: new FakeClock() });
    hub.watchPath(root, true, () => undefined, () => undefined);
    let reads = 0;
    const failing = async (): Promise<PathReading> => {
      reads++;
      throw Object.assign(new Error('gone'), { code: 'ENOENT' });
    };
    await assert.rejects(hub.shareReading(root, failing));
    await assert.rejects(hub.shareReading(root, failing));
    assert.equal(reads, 2);
  });

  it('file sources of many nodes on one directory: one reading for their re-lists, and every change still seen', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-hub-'));
    try {
      await writeFile(join(dir, 'p0.yaml'), podManifestYaml('p0', 'default'));
      const clock = new FakeClock();
      const hub = createFileWatchHub(undefined, { clock, shareMs: 1000 });
      let reads = 0;
      const counting: typeof hub.shareReading = (path, read) => hub.shareReading(path, () => (reads++, read()));
      const latest = new Map<number, string[]>();
      const nodes = [0, 1, 2, 3, 4];
      const sources = nodes.map((i) =>
        createFileSource({ path: dir, nodeName: `n${i}`, clock, watchPath: hub.watchPath, shareReading: counting, onUpdate: (u) => latest.set(i, u.pods.map((p) => p.metadata?.name ?? '')) }),
      );
      sources.forEach((s) => s.start());
      await waitFor(() => hub.size() === 1 && latest.size === nodes.length, 'every source listed once and watching');
      const names = (file: string): string[][] => nodes.map((i) => [`${file}-n${i}`]);
      assert.deepEqual(nodes.map((i) => latest.get(i)), names('p0'));

      await clock.advance(2000);
      reads = 0;
      await Promise.all(sources.map((s) => s.listConfig()));
      assert.equal(reads, 1, 'five re-lists of one watched directory, one reading');

      // A new manifest: each source sees it through the shared watch, and the next re-lists
      // read the directory afresh (once) rather than take the listing from before the change.
      await writeFile(join(dir, 'p1.yaml'), podManifestYaml('p1', 'default'));
      await waitFor(() => nodes.every((i) => latest.get(i)?.length === 2), 'every source saw p1.yaml');
      reads = 0;
      await Promise.all(sources.map((s) => s.listConfig()));
      // One, or two if a late event of the write (a second `change`) fell between them.
      assert.ok(reads >= 1 && reads <= 2, `${reads} readings for five re-lists after a change`);
      assert.deepEqual(nodes.map((i) => latest.get(i)), nodes.map((i) => [`p0-n${i}`, `p1-n${i}`]));
      await Promise.all(sources.map((s) => s.stop()));
      assert.equal(hub.size(), 0, 'the last source to stop closes the watch');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
