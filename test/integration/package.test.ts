// `npm pack` ships a working package: another project can install it, import the public API
// and its types by the package name, and run the command.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(root, 'node_modules', '.bin', 'tsc');

it('npm pack produces a package that installs, imports by name, type-checks and runs', { timeout: 240_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'kp-pack-'));
  try {
    await run('npm', ['pack', '--pack-destination', work], { cwd: root });
    const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote a tarball');
    const consumer = join(work, 'consumer');
    await run('mkdir', ['-p', consumer]);
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball)], { cwd: consumer });

    await writeFile(
      join(consumer, 'use.ts'),
      `import { PodManager, type ResolvedPodUID } from 'kubelet-pods';
import { FakeMirrorClient } from 'kubelet-pods/testing';
const pm = new PodManager({ mirrorClient: new FakeMirrorClient() });
pm.addPod({ metadata: { uid: 's1', name: 'web', namespace: 'default', annotations: { 'kubernetes.io/config.source': 'file' } } });
pm.addPod({ metadata: { uid: 'm1', name: 'web', namespace: 'default', annotations: { 'kubernetes.io/config.mirror': 'h' } } });
const uid: ResolvedPodUID = pm.translatePodUID('m1');
console.log(uid, pm.getPods().length);
`,
    );
    await run(tsc, ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', 'use.ts'], { cwd: consumer });
    const { stdout } = await run(process.execPath, ['use.js'], { cwd: consumer });
    assert.equal(stdout.trim(), 's1 1');

    const help = await run(join(consumer, 'node_modules', '.bin', 'kubelet-pods'), ['--help'], { cwd: consumer });
    assert.match(help.stdout, /run\s+run the node agent/);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
