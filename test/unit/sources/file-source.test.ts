// Mirrors pkg/kubelet/config/file_test.go and file_linux_test.go (FS-*), plus the
// kubelet-pods rules: first duplicate wins, editor saves, late symlink targets, size limit.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { MAX_CONFIG_LENGTH } from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import type { Pod } from '../../../src/pod/types.js';
import { createFileSource, type FileSource, type FileSourceOptions } from '../../../src/sources/file-source.js';
import { createPodConfig } from '../../../src/sources/pod-config.js';
import type { PodUpdate, SourceLogger } from '../../../src/sources/types.js';
import { realClock, type Clock } from '../../../src/time/clock.js';
import { flush, Recorder, waitFor } from '../../helpers/wait.js';

const NODE = 'random-test-hostname';
const temps: string[] = [];
const sources: FileSource[] = [];
after(async () => {
  for (const s of sources) await s.stop();
  for (const d of temps) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'kp-file-source-'));
  temps.push(d);
  return d;
}

/** The FS input pod, as v1 JSON. */
function fpInput(containerName = 'image'): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'test', uid: '12345', namespace: 'mynamespace' },
    spec: {
      containers: [
        { name: containerName, image: 'test/image', securityContext: { capabilities: {}, privileged: false, procMount: 'Default' } },
      ],
      securityContext: {},
      schedulerName: 'default-scheduler',
    },
    status: { phase: 'Pending' },
  });
}

/** The pod the kubelet's file tests expect from fpInput() on node random-test-hostname ("FP"). */
function fp(containerName = 'image'): Pod {
  return {
    metadata: { name: 'test-random-test-hostname', uid: '12345', namespace: 'mynamespace', annotations: { 'kubernetes.io/config.hash': '12345' } },
    spec: {
      nodeName: NODE,
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      tolerations: [{ operator: 'Exists', effect: 'NoExecute' }],
      containers: [
        {
          name: containerName,
          image: 'test/image',
          terminationMessagePath: '/dev/termination-log',
          imagePullPolicy: 'Always',
          securityContext: { capabilities: {}, privileged: false, procMount: 'Default' },
          terminationMessagePolicy: 'File',
        },
      ],
      securityContext: {},
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
    },
    status: { phase: 'Pending' },
  };
}

const setOf = (pods: Pod[]): PodUpdate => ({ op: 'SET', source: 'file', pods });
/** An update without its delta and origins, to compare with setOf. */
const view = (u: PodUpdate): PodUpdate => ({ op: u.op, source: u.source, pods: u.pods });

function manifest(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...extra }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
}

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}
function captureLogger(): { logger: SourceLogger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: object, msg: string) => lines.push({ level, fields: fields as Record<string, unknown>, msg });
  return { logger: { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }, lines };
}

function startSource(options: Omit<FileSourceOptions, 'onUpdate' | 'nodeName'> & { nodeName?: string }): Recorder<PodUpdate> {
  const rec = new Recorder<PodUpdate>();
  const source = createFileSource({ nodeName: NODE, ...options, onUpdate: rec.push });
  sources.push(source);
  source.start();
  return rec;
}

const names = (u: PodUpdate): string[] => u.pods.map((p) => p.metadata?.name ?? '');

describe('FS file source', () => {
  test('FS-1 TestExtractFromBadDataFile', async () => {
    const dir = await tempDir();
    const file = join(dir, 'test_pod_config');
    await writeFile(file, Buffer.from([1, 2, 3]));
    await chmod(file, 0o555);
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: file, nodeName: 'localhost', fileCheckFrequencyMs: 1, onUpdate: rec.push });
    await assert.rejects(source.listConfig(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_DECODE'));
    assert.equal(rec.items.length, 0);
  });

  test('FS-2 TestExtractFromEmptyDir', async () => {
    const dir = await tempDir();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'localhost', onUpdate: rec.push });
    await source.listConfig();
    assert.deepEqual(rec.items.map(view), [setOf([])]);
  });

  test('FS-3 TestExtractFromNonExistentFile', async () => {
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: '/some/fake/file', nodeName: 'localhost', onUpdate: rec.push });
    await assert.rejects(source.listConfig(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_PATH_MISSING'));
  });

  test('FS-4 TestUpdateOnNonExistentFile', async () => {
    const dir = await tempDir();
    const { logger, lines } = captureLogger();
    const rec = startSource({ path: join(dir, 'random_non_existent_path'), fileCheckFrequencyMs: 1, logger });
    assert.deepEqual(view(await rec.next('an empty SET for a missing path')), setOf([]));
    await waitFor(() => lines.some((l) => l.level === 'error' && /does not exist/.test(String((l.fields.err as Error)?.message))), 'the missing-path error to be logged');
  });

  test('FS-5 TestReadPodsFromFileExistAlready', async () => {
    const dir = await tempDir();
    const file = join(dir, 'test_pod_manifest');
    await writeFile(file, fpInput());
    const rec = startSource({ path: file, fileCheckFrequencyMs: 60_000 });
    assert.deepEqual(view(await rec.next('the first SET')), setOf([fp()]));
  });

  for (const watchDir of [true, false]) {
    for (const useSymlink of [true, false]) {
      const desc = `${watchDir ? 'dir' : 'file'}, ${useSymlink ? 'symlink' : 'plain'}`;

      test(`FS-6 TestWatchFileAdded/${desc}`, async () => {
        const dir = await tempDir();
        const name = 'test_pod_manifest_0';
        let real = join(dir, name);
        if (useSymlink) {
          const targetDir = await tempDir();
          real = join(targetDir, name);
          await symlink(real, join(dir, name));
        }
        const rec = startSource({ path: watchDir ? dir : join(dir, name), fileCheckFrequencyMs: 100 });
        const first = await rec.next('the first (empty) update');
        assert.equal(first.pods.length, 0);
        await writeFile(real, fpInput());
        const update = await rec.nextMatching((u) => u.pods.length > 0, 'a non-empty SET after the file was written');
        assert.deepEqual(view(update), setOf([fp()]));
      });

      test(`FS-7 TestWatchFileChanged/${desc}`, async () => {
        const dir = await tempDir();
        const name = 'test_pod_manifest_0';
        let real = join(dir, name);
        if (useSymlink) {
          const targetDir = await tempDir();
          real = join(targetDir, name);
          await symlink(real, join(dir, name));
        }
        await writeFile(real, fpInput());
        // The kubelet uses 3 s for dir+symlink (nothing watches the target) and 60 s otherwise.
        const period = watchDir && useSymlink ? 300 : 60_000;
        const rec = startSource({ path: watchDir ? dir : join(dir, name), fileCheckFrequencyMs: period });
        assert.deepEqual(view(await rec.next('the initial SET')), setOf([fp()]));
        await writeFile(real, fpInput('image2'));
        assert.deepEqual(
          view(await rec.nextMatching((u) => u.pods.length > 0, 'the SET with container image2')),
          setOf([fp('image2')]),
        );
        if (!watchDir) return;
        await rename(join(dir, name), join(dir, `${name}_ch`));
        const next = await rec.next('the update after the rename');
        assert.equal(next.pods.length, 0, 'the update right after a rename-away must be empty');
        assert.deepEqual(view(await rec.nextMatching((u) => u.pods.length > 0, 'the pod back from the new name')), setOf([fp('image2')]));
      });
    }
  }
});

describe('file source: kubelet-pods rules', () => {
  test('dotfiles are ignored, other names parsed whatever the extension, sub-directories skipped, byte order', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, '.hidden.yaml'), manifest('hidden'));
    await writeFile(join(dir, 'b.yaml.bak'), manifest('b'));
    await writeFile(join(dir, 'README'), manifest('readme'));
    await writeFile(join(dir, 'a.json'), manifest('a'));
    await import('node:fs/promises').then((fs) => fs.mkdir(join(dir, 'sub')));
    await writeFile(join(dir, 'sub', 'c.yaml'), manifest('c'));
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'N', onUpdate: rec.push });
    await source.listConfig();
    assert.deepEqual(names(rec.items[0]!), ['readme-n', 'a-n', 'b-n']);
  });

  test('two files with the same namespace/name: the first in byte order wins and a warning names both', async () => {
    // The file source sends both pods, with their paths; the merger keeps the first and warns.
    const dir = await tempDir();
    const first = join(dir, 'kube-apiserver.yaml');
    const second = join(dir, 'kube-apiserver.yaml-bak');
    await writeFile(first, manifest('kube-apiserver', { labels: { v: 'new' } }));
    await writeFile(second, manifest('kube-apiserver', { labels: { v: 'old' } }));
    const { logger, lines } = captureLogger();
    const config = createPodConfig({ logger });
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: config.channel('file'), logger });
    await source.listConfig();
    const added = config.updates.tryNext();
    assert.equal(added?.op, 'ADD');
    assert.deepEqual(added.pods.map((p) => p.metadata?.labels), [{ v: 'new' }]);
    const warnings = (): LogLine[] => lines.filter((l) => l.level === 'warn');
    assert.equal(warnings().length, 1);
    assert.equal(warnings()[0]!.msg, 'pod ignored: an earlier pod of the same source has its full name');
    assert.deepEqual(
      { pod: warnings()[0]!.fields.pod, path: warnings()[0]!.fields.path, kept: warnings()[0]!.fields.kept },
      { pod: 'kube-apiserver-n_default', path: second, kept: first },
    );

    // The winner changes: a new pod for the name, the loser still ignored, not warned again.
    await writeFile(first, manifest('kube-apiserver', { labels: { v: 'newer' } }));
    await source.listConfig();
    const changed = [config.updates.tryNext(), config.updates.tryNext()];
    assert.deepEqual(changed.map((u) => [u?.op, u?.pods.map((p) => p.metadata?.labels)]), [['REMOVE', [{ v: 'new' }]], ['ADD', [{ v: 'newer' }]]]);
    assert.equal(config.updates.tryNext(), undefined);
    assert.equal(warnings().length, 1, 'the same duplicate is not warned twice');

    // The winner goes: the other file's pod takes the name.
    await rm(first);
    await source.listConfig();
    const after = [config.updates.tryNext(), config.updates.tryNext()];
    assert.deepEqual(after.map((u) => [u?.op, u?.pods.map((p) => p.metadata?.labels)]), [['REMOVE', [{ v: 'newer' }]], ['ADD', [{ v: 'old' }]]]);
    assert.equal(warnings().length, 1);
  });

  test('a bad file is reported once per change and never disturbs the other pods', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'good.yaml'), manifest('good'));
    await writeFile(join(dir, 'bad.yaml'), 'kind: Pod\napiVersion: v1\nmetadata: {name: BAD}\nspec: {containers: [{name: c, image: i}]}\n');
    const { logger, lines } = captureLogger();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, logger });
    await source.listConfig();
    await source.listConfig();
    assert.deepEqual(rec.items.map(names), [['good-n']], 'one SET with the good pod; the identical second SET is suppressed');
    const errors = lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.fields.path, join(dir, 'bad.yaml'));
    assert.match(String((errors[0]!.fields.err as Error).message), /metadata\.name: Invalid value: "BAD-n"/);
    await writeFile(join(dir, 'bad.yaml'), 'not: a pod\n');
    await source.listConfig();
    assert.equal(lines.filter((l) => l.level === 'error').length, 2, 'a new bad content is reported again');
  });

  test('a file of 10 MiB + 1 byte is refused, 10 MiB is read', async () => {
    const dir = await tempDir();
    const body = manifest('big');
    const padded = (size: number): string => body + ' '.repeat(size - Buffer.byteLength(body));
    await writeFile(join(dir, 'big'), padded(MAX_CONFIG_LENGTH + 1));
    const { logger, lines } = captureLogger();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, logger });
    await source.listConfig();
    assert.deepEqual(rec.items.map(view), [setOf([])]);
    assert.ok(lines.some((l) => hasErrorCode(l.fields.err, 'KP_ERR_SOURCE_FILE_TOO_LARGE')));
    await writeFile(join(dir, 'big'), padded(MAX_CONFIG_LENGTH));
    await source.listConfig();
    assert.deepEqual(names(rec.items[1]!), ['big-n']);
  });

  test('a vim-style save (write .x.swp, rename over the file) is picked up by the watch', async () => {
    const dir = await tempDir();
    const file = join(dir, 'web.yaml');
    await writeFile(file, manifest('web', { labels: { v: '1' } }));
    const rec = startSource({ path: dir, nodeName: 'n', fileCheckFrequencyMs: 60_000 });
    const first = await rec.next('the initial SET');
    assert.deepEqual(first.pods[0]!.metadata?.labels, { v: '1' });
    await writeFile(join(dir, '.web.yaml.swp'), manifest('web', { labels: { v: '2' } }));
    await rename(join(dir, '.web.yaml.swp'), file);
    const update = await rec.nextMatching((u) => u.pods[0]?.metadata?.labels?.v === '2', 'the pod with label v=2');
    assert.equal(update.pods.length, 1);
    assert.notEqual(update.pods[0]!.metadata?.uid, first.pods[0]!.metadata?.uid, 'new content, new UID');
  });

  test('a symlinked manifest whose target appears later is picked up by the re-list', async () => {
    const dir = await tempDir();
    const targetDir = await tempDir();
    await symlink(join(targetDir, 'etcd.yaml'), join(dir, 'etcd.yaml'));
    const rec = startSource({ path: dir, nodeName: 'n', fileCheckFrequencyMs: 50 });
    assert.deepEqual(view(await rec.next('the empty SET')), setOf([]));
    await writeFile(join(targetDir, 'etcd.yaml'), manifest('etcd'));
    const update = await rec.nextMatching((u) => u.pods.length > 0, 'the pod from the late symlink target');
    assert.deepEqual(names(update), ['etcd-n']);
  });

  test('a watched edit to invalid content keeps the old pod until the next full re-list', async () => {
    const dir = await tempDir();
    const file = join(dir, 'web.yaml');
    await writeFile(file, manifest('web'));
    const { lines, logger } = captureLogger();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, fileCheckFrequencyMs: 60_000, logger });
    sources.push(source);
    source.start();
    await rec.next('the initial SET');
    // The listing made once the watch is in place is a full re-list too: let it end first (a
    // listing queued behind it resolves after it).
    await waitFor(() => source.stats().listings >= 2, 'the listing after the watch started');
    await source.listConfig();
    await writeFile(file, '{ this is not a pod');
    // The parse error is logged when the watch event is handled: only then check that nothing was sent.
    await waitFor(() => lines.some((l) => l.level === 'error' && l.fields.path === file), 'the parse error of the edited file');
    await flush();
    assert.equal(rec.pending, 0, 'the unparsable edit sends nothing (old pod stays)');
    await source.listConfig();
    assert.deepEqual(view(await rec.next('the SET after the re-list')), setOf([]));
  });
});

describe('file source: re-lists skip settled files', () => {
  // A clock 10 s ahead makes every read count as settled (the file unchanged for > 2 s).
  const later: Clock = { ...realClock, now: () => new Date(Date.now() + 10_000) };

  test('a listing re-reads only the files whose size, inode or times changed', async () => {
    const dir = await tempDir();
    for (const n of ['a', 'b', 'c']) await writeFile(join(dir, `${n}.yaml`), manifest(n));
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, watch: false, fileCheckFrequencyMs: 60_000, clock: later });
    sources.push(source);
    await source.listConfig();
    assert.deepEqual(names(await rec.next('the first SET')), ['a-n', 'b-n', 'c-n']);
    assert.equal(source.stats().filesRead, 3);
    await source.listConfig();
    assert.equal(source.stats().filesRead, 3, 'nothing changed: nothing read');
    assert.equal(rec.pending, 0);
    await writeFile(join(dir, 'b.yaml'), manifest('b', { labels: { edited: 'yes' } }));
    await source.listConfig();
    assert.equal(source.stats().filesRead, 4, 'only the edited file is read');
    const set = await rec.next('the SET after the edit');
    assert.deepEqual(set.pods.find((p) => p.metadata?.name === 'b-n')?.metadata?.labels, { edited: 'yes' });
    assert.equal(source.stats().listings, 3);
  });

  test('a file read while still changing is read again by the next listing', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.yaml'), manifest('a'));
    const rec = new Recorder<PodUpdate>();
    // The real clock: the file was written just now, so its first read is not trusted.
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, watch: false, fileCheckFrequencyMs: 60_000 });
    sources.push(source);
    await source.listConfig();
    await source.listConfig();
    assert.equal(source.stats().filesRead, 2);
  });

  test('after a watched edit to invalid content, a listing of the settled file drops the old pod', async () => {
    const dir = await tempDir();
    const file = join(dir, 'web.yaml');
    await writeFile(file, manifest('web'));
    const { lines, logger } = captureLogger();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, fileCheckFrequencyMs: 60_000, logger, clock: later });
    sources.push(source);
    source.start();
    await rec.next('the initial SET');
    // Renamed in whole (a dotfile is not watched), so the watch sees one complete edit.
    await writeFile(join(dir, '.web.tmp'), '{ this is not a pod');
    await rename(join(dir, '.web.tmp'), file);
    await waitFor(() => lines.some((l) => l.level === 'error' && l.fields.path === file), 'the parse error of the edited file');
    await flush();
    assert.equal(rec.pending, 0, 'the unparsable edit sends nothing (old pod stays)');
    const reads = source.stats().filesRead;
    await source.listConfig();
    assert.equal(source.stats().filesRead, reads, 'the settled file is not read again');
    assert.deepEqual(view(await rec.next('the SET after the re-list')), setOf([]));
  });
});

describe('file source: bursts', () => {
  test('a burst of 300 manifests renamed in is sent as a few SETs, not one per file, and the last SET has every pod', async () => {
    const dir = await tempDir();
    const staging = await tempDir();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, fileCheckFrequencyMs: 600_000 });
    sources.push(source);
    source.start();
    await rec.next('the first (empty) SET');
    // Wait for the watcher to be armed: a probe file must arrive through it.
    await writeFile(join(dir, 'probe.yaml'), manifest('probe'));
    await waitFor(() => rec.items.at(-1)?.pods.length === 1, 'the probe pod through the watch', { timeoutMs: 10_000 });
    const before = rec.items.length;
    const count = 300;
    for (let i = 0; i < count; i++) await writeFile(join(staging, `p-${i}.yaml`), manifest(`p-${i}`));
    await Promise.all(Array.from({ length: count }, (_, i) => rename(join(staging, `p-${i}.yaml`), join(dir, `p-${i}.yaml`))));
    await waitFor(() => rec.items.at(-1)?.pods.length === count + 1, 'every pod in the last SET', { timeoutMs: 20_000 });
    const sets = rec.items.length - before;
    assert.ok(sets < count / 3, `${sets} SETs for a burst of ${count} files`);
  });
});

/**
 * A source on `dir` whose watch is driven by the test, so that every event it is given is
 * queued before any is handled; resolves once the first SET (of `pods` pods) is in.
 */
async function startWithHandDrivenWatch(dir: string, pods: number): Promise<{ rec: Recorder<PodUpdate>; event: (name: string) => void }> {
  let listener: ((name: string | null) => void) | undefined;
  const rec = new Recorder<PodUpdate>();
  const source = createFileSource({
    path: dir,
    nodeName: 'n',
    onUpdate: rec.push,
    fileCheckFrequencyMs: 600_000,
    watchPath: (_root, _isDirectory, onEvent) => ((listener = onEvent), { close: () => {} }),
  });
  sources.push(source);
  source.start();
  await waitFor(() => rec.items.at(-1)?.pods.length === pods && listener !== undefined, 'the first SET and the watch');
  await flush();
  return { rec, event: (name) => listener!(name) };
}

describe('file source: events handled in batches', () => {
  test('a manifest written just after 100 removals comes in the SET after one batch, not after a SET per removed file', async () => {
    const dir = await tempDir();
    const count = 100;
    for (let i = 0; i < count; i++) await writeFile(join(dir, `old-${i}.yaml`), manifest(`old-${i}`));
    const { rec, event } = await startWithHandDrivenWatch(dir, count);
    const before = rec.items.length;
    for (let i = 0; i < count; i++) await rm(join(dir, `old-${i}.yaml`));
    await writeFile(join(dir, 'late.yaml'), manifest('late'));
    for (let i = 0; i < count; i++) event(`old-${i}.yaml`);
    event('late.yaml');
    await waitFor(() => rec.items.at(-1)?.pods.length === 1, 'a SET with only the late pod');
    await flush();
    assert.deepEqual(names(rec.items.at(-1)!), ['late-n']);
    const sets = rec.items.length - before;
    // 101 events in batches of up to 64: two batches, and the first is folded into the second
    // while more than 8 events wait. Handled one at a time, the same events gave 9 SETs.
    assert.ok(sets <= 2, `${sets} SETs for 101 events queued at once`);
  });
});

describe('file source: a rename within the directory', () => {
  test('both of its events in one batch still give the empty SET first, then the pod under its new name (FS-7)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'web.yaml'), manifest('web'));
    const { rec, event } = await startWithHandDrivenWatch(dir, 1);
    const before = rec.items.length;
    const oldUid = rec.items.at(-1)!.pods[0]!.metadata?.uid;
    await rename(join(dir, 'web.yaml'), join(dir, 'web.yaml_ch'));
    event('web.yaml');
    event('web.yaml_ch');
    await waitFor(() => rec.items.length >= before + 2, 'two SETs after the rename');
    await flush();
    const after = rec.items.slice(before);
    assert.deepEqual(after.map((u) => u.pods.length), [0, 1]);
    assert.deepEqual(names(after[1]!), ['web-n']);
    assert.notEqual(after[1]!.pods[0]!.metadata?.uid, oldUid, 'the UID follows the file name');
  });
});

describe('file source: entries the watch cannot stat', () => {
  test('a symlink loop created while watching is logged with its own path, and the other pods stay', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'good.yaml'), manifest('good'));
    const { logger, lines } = captureLogger();
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, logger, fileCheckFrequencyMs: 600_000 });
    sources.push(source);
    source.start();
    assert.equal((await rec.next('the first SET')).pods.length, 1);
    // The watch may need a moment to be armed: a probe file proves it is.
    await writeFile(join(dir, 'probe.yaml'), manifest('probe'));
    await waitFor(() => rec.items.at(-1)?.pods.length === 2, 'the probe through the watch', { timeoutMs: 10_000 });
    const loop = join(dir, 'loop.yaml');
    await symlink(loop, loop);
    await waitFor(() => lines.some((l) => l.fields.path === loop), 'a log line naming the loop', { timeoutMs: 10_000 });
    assert.equal(lines.filter((l) => l.fields.path === dir).length, 0, 'the directory itself is not blamed');
    assert.equal(rec.items.at(-1)?.pods.length, 2);
  });
});

describe('file source: stop and start again', () => {
  test('a file written after the first listing and before the watch exists is sent without waiting for the re-list', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.yaml'), manifest('a'));
    const rec = new Recorder<PodUpdate>();
    let first = true;
    const source = createFileSource({
      path: dir,
      nodeName: 'n',
      // The first SET is sent once the directory was read and before the watch is set up:
      // a file written here has no event to announce it.
      onUpdate: (u) => {
        if (first) writeFileSync(join(dir, 'b.yaml'), manifest('b'));
        first = false;
        rec.push(u);
      },
      fileCheckFrequencyMs: 600_000,
    });
    sources.push(source);
    source.start();
    assert.deepEqual(names(await rec.next('the first SET')), ['a-n']);
    const next = await rec.nextMatching((u) => u.pods.length === 2, 'the SET with the file written in the gap', 5_000);
    assert.deepEqual(names(next), ['a-n', 'b-n']);
  });

  test('nothing is sent while stopped; start() sends the whole set again, changes made meanwhile included', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.yaml'), manifest('a'));
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, fileCheckFrequencyMs: 60_000 });
    sources.push(source);
    source.start();
    assert.deepEqual(names(await rec.next('the first SET')), ['a-n']);
    await source.stop();
    await writeFile(join(dir, 'b.yaml'), manifest('b'));
    await source.listConfig();
    await flush();
    assert.equal(rec.pending, 0, 'a stopped source sends nothing');

    source.start();
    const again = await rec.next('the SET after the restart');
    assert.deepEqual(names(again), ['a-n', 'b-n']);
    assert.equal(again.delta, undefined, 'the first SET after a start is whole, not a delta');
    // And the restarted source watches again.
    await writeFile(join(dir, 'c.yaml'), manifest('c'));
    const watched = await rec.nextMatching((u) => u.pods.length === 3, 'the pod written after the restart', 10_000);
    assert.deepEqual(watched.delta?.changed.map((p) => p.metadata?.name), ['c-n']);
  });

  test('SETs after the first carry the delta and the origins; a listing that finds nothing new sends nothing', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a.yaml'), manifest('a'));
    await writeFile(join(dir, 'b.yaml'), manifest('b'));
    const rec = new Recorder<PodUpdate>();
    const source = createFileSource({ path: dir, nodeName: 'n', onUpdate: rec.push, watch: false });
    await source.listConfig();
    const first = await rec.next('the first SET');
    assert.equal(first.delta, undefined);
    assert.deepEqual(first.origins, [join(dir, 'a.yaml'), join(dir, 'b.yaml')]);
    await source.listConfig();
    assert.equal(rec.pending, 0);
    await writeFile(join(dir, 'b.yaml'), manifest('b', { labels: { v: '2' } }));
    await rm(join(dir, 'a.yaml'));
    await writeFile(join(dir, 'c.yaml'), manifest('c'));
    await source.listConfig();
    const next = await rec.next('the SET after the changes');
    assert.equal(next.delta?.base, first.pods, 'the base is the previous SET itself');
    assert.deepEqual(next.delta?.changed.map((p) => p.metadata?.labels ?? {}), [{ v: '2' }, {}]);
    assert.deepEqual(next.delta?.changed.map((p) => p.metadata?.name), ['b-n', 'c-n']);
    assert.deepEqual(next.delta?.removed.map((p) => p.metadata?.name), ['a-n', 'b-n'], 'a gone; b has a new UID');
    assert.deepEqual(next.origins, [join(dir, 'b.yaml'), join(dir, 'c.yaml')]);
  });
});
