// The container image (Containerfile, tools/image/build-image.ts): built with buildah from
// scratch into a storage root of this test's own, then run with `buildah run --isolation
// chroot` (which shares the host's network, so the agent's port is reached on loopback):
// `--help`, and a standalone `run` on a mounted manifest directory, as the image's non-root user.
// Needs buildah (`apt-get install -y buildah`), which the README's `npm test` does not assume:
// it runs in `npm run test:artifacts` (.ci/run installs buildah first). Without buildah it
// fails and says so, it does not skip.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { buildah, buildahGlobalArgs, buildImage, IMAGE_EXE_PATH, IMAGE_UID, type BuildahStorage } from '../../tools/image/build-image.js';
import { freePort } from '../helpers/node-endpoints.js';
import { buildTestExecutable, type TestExecutable } from '../helpers/executable.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const id = randomBytes(4).toString('hex');
const TAG = `localhost/kubelet-pods-test:${id}`;
const CONTAINER = `kubelet-pods-test-${id}`;
const NODE = `image-node-${id}`;

let exe: TestExecutable | undefined;
let work: string | undefined;
let storage: BuildahStorage = {};
const running: ChildProcess[] = [];

before(async () => {
  await buildah(['--version']); // fails with how to install buildah when it is missing
  work = await mkdtemp(join(tmpdir(), 'kp-image-'));
  storage = { root: join(work, 'storage'), runroot: join(work, 'run') };
  exe = await buildTestExecutable();
});

after(async () => {
  for (const child of running) child.kill('SIGKILL');
  if (work !== undefined) {
    await buildah(['rm', '--all'], storage).catch(() => {});
    await buildah(['rmi', '--all', '--force'], storage).catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
  await exe?.dispose();
});

function workDir(): string {
  assert.ok(work, 'the work directory was made in before()');
  return work;
}

/** The processes whose command line contains `marker`, with their real UIDs. */
async function processesWith(marker: string): Promise<{ pid: number; uid: number }[]> {
  const found: { pid: number; uid: number }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0');
      if (cmdline[0] !== IMAGE_EXE_PATH || !cmdline.includes(marker)) continue;
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      found.push({ pid: Number(entry), uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]) });
    } catch {
      // the process ended while being read
    }
  }
  return found;
}

it('builds from scratch: the executable and its shared libraries, a non-root user, the executable as entrypoint', async (t) => {
  assert.ok(exe, 'the executable was built in before()');
  const image = await buildImage({ exe: exe.path, tags: [TAG], contextDir: join(workDir(), 'context'), storage, log: () => {} });
  t.diagnostic(`image built in ${image.seconds.toFixed(1)} s: ${image.size} (${(image.bytes / 1e6).toFixed(1)} MB of files)`);
  t.diagnostic(`shared libraries: ${image.libraries.join(' ')}`);
  assert.ok(image.libraries.some((l) => /\/libc\.so\.6$/.test(l)), `glibc among the libraries: ${image.libraries.join(', ')}`);

  const { stdout } = await buildah(['inspect', '--type', 'image', TAG], storage);
  const config = (JSON.parse(stdout) as { OCIv1: { config: { User?: string; Entrypoint?: string[]; Cmd?: string[] } } }).OCIv1.config;
  assert.equal(config.User, `${IMAGE_UID}:${IMAGE_UID}`);
  assert.deepEqual(config.Entrypoint, [IMAGE_EXE_PATH]);
  assert.deepEqual(config.Cmd, ['--help']);
  await buildah(['from', '--name', CONTAINER, TAG], storage);
});

it('runs kubelet-pods --help inside the image', async () => {
  const { stdout } = await buildah(['run', '--isolation', 'chroot', CONTAINER, '--', IMAGE_EXE_PATH, '--help'], storage);
  assert.match(stdout, /usage: kubelet-pods <command>/);
  assert.match(stdout, /^ {2}run /m);
});

it('runs the agent standalone inside the image, as the non-root user: /pods lists the mounted manifest’s pod', async () => {
  const manifests = join(workDir(), 'manifests');
  await mkdir(manifests);
  await writeFile(join(manifests, 'web.yaml'), podManifestYaml('web', 'default'));
  // The image's user (65532) reads the mount: open the directory to it.
  await chmod(workDir(), 0o755);
  await chmod(manifests, 0o755);
  await chmod(join(manifests, 'web.yaml'), 0o644);

  // A read-only port of 0 turns it off, as in the kubelet: pick a free one.
  const port = await freePort();
  const child = spawn(
    'buildah',
    [
      ...buildahGlobalArgs(storage),
      'run', '--isolation', 'chroot', '-v', `${manifests}:/etc/kubelet-pods/manifests:ro`, CONTAINER, '--',
      IMAGE_EXE_PATH, 'run', '--pod-manifest-path', '/etc/kubelet-pods/manifests', '--hostname-override', NODE,
      '--read-only-port', String(port), '--healthz-port', '0',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.push(child);
  let log = '';
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const withLog = async <T>(wait: Promise<T>): Promise<T> =>
    wait.catch((err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}\nagent output:\n${log}`);
    });
  const started = await withLog(
    waitFor(() => log.split('\n').find((line) => line.includes('"agent started"')), "the agent's start line inside the image", {
      timeoutMs: 30_000,
      intervalMs: 50,
    }),
  );
  const fields = JSON.parse(started) as { readOnly?: { port: number }; standalone?: boolean; node?: string };
  assert.deepEqual([fields.standalone, fields.node, fields.readOnly?.port], [true, NODE, port], 'standalone (no kubeconfig), on our port');
  const pods = await withLog(
    waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/pods`);
        const list = (await res.json()) as { items: { metadata: { name: string } }[] };
        return list.items.some((p) => p.metadata.name === `web-${NODE}`) ? list : undefined;
      },
      `the static pod web-${NODE} on /pods`,
      { timeoutMs: 15_000, intervalMs: 100 },
    ),
  );
  assert.equal(pods.items.length, 1);

  const agents = await processesWith(NODE);
  assert.ok(agents.length > 0, 'the agent process is visible from the host');
  for (const p of agents) assert.equal(p.uid, IMAGE_UID, `process ${p.pid} runs as the image's non-root user`);

  // buildah run ends its command when it is told to stop.
  child.kill('SIGTERM');
  await exited;
  await waitFor(async () => (await processesWith(NODE)).length === 0, 'the agent inside the image gone after buildah run ended', {
    timeoutMs: 10_000,
    intervalMs: 100,
  });
});
