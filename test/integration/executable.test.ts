// The single executable (`npm run build:exe`, tools/exe/build-exe.ts) as users get it: one
// file in an otherwise empty directory, no node_modules, no dist/, no checkout. It prints its
// help, runs the agent against the real control plane (a mirror pod appears for a manifest and
// goes away with it), and runs `local-cluster` from the Go sources it carries and `demo` on
// the examples it carries.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { buildTestExecutable, type TestExecutable } from '../helpers/executable.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';
import { SUBCOMMANDS } from '../../src/cli/commands.js';

const execFileAsync = promisify(execFile);

const NODE = 'exe-node';
const MIRROR = 'kubernetes.io/config.mirror';
const cp = useControlPlane({ nodes: [NODE] });

let exe: TestExecutable | undefined;
const agents: AgentProcess[] = [];
const dirs: string[] = [];

before(async () => {
  exe = await buildTestExecutable();
});

after(async () => {
  for (const a of agents) await a.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  await exe?.dispose();
});

function executable(): TestExecutable {
  assert.ok(exe, 'the executable was built in before()');
  return exe;
}

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

it('is one file: built alone into an empty directory, with the control plane sources and examples embedded', async (t) => {
  const { build, dir } = executable();
  t.diagnostic(`built in ${build.seconds.toFixed(1)} s, ${(build.bytes / 1e6).toFixed(1)} MB, ${build.embeddedFiles} embedded files`);
  assert.deepEqual(await readdir(dir), ['kubelet-pods']);
  assert.ok(build.embeddedFiles >= 10, `expected the control plane's Go sources and examples/, got ${build.embeddedFiles} files`);
});

it('prints its help and each command’s, with nothing on stderr, from an empty directory', async () => {
  const { path, dir } = executable();
  const top = await execFileAsync(path, ['--help'], { cwd: dir });
  assert.match(top.stdout, /usage: kubelet-pods <command>/);
  // Every command the CLI has, so that one left out of the bundle shows here.
  const commands = Object.keys(SUBCOMMANDS);
  for (const command of commands) assert.match(top.stdout, new RegExp(`^  ${command} `, 'm'));
  assert.equal(top.stderr, '', 'no warnings (such as the SEA require() warning) on stderr');
  for (const command of commands) {
    const { stdout, stderr } = await execFileAsync(path, [command, '--help'], { cwd: dir });
    assert.match(stdout, new RegExp(`usage: kubelet-pods ${command}`));
    assert.equal(stderr, '', `no warnings on stderr for ${command} --help`);
  }
});

it('runs the agent: a mirror pod appears for a manifest, and is deleted when the manifest goes', async () => {
  const { path } = executable();
  const manifests = await tempDir('kp-exe-manifests-');
  await writeFile(join(manifests, 'web.yaml'), podManifestYaml('web', cp.namespace));
  const agent = startAgentProcess({
    executable: path,
    nodeName: NODE,
    kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!,
    manifestDir: manifests,
  });
  agents.push(agent);
  const mirrorName = `web-${NODE}`;
  const findMirror = async () => {
    const pods = await cp.adminApi.listNamespacedPod({ namespace: cp.namespace });
    return pods.items.find((p) => p.metadata?.name === mirrorName && p.metadata.annotations?.[MIRROR] !== undefined);
  };
  await waitFor(findMirror, `the mirror pod ${mirrorName} created by the executable (agent log:\n${agent.logs()})`, {
    timeoutMs: 30_000,
    intervalMs: 200,
  });

  await rm(join(manifests, 'web.yaml'));
  await waitFor(async () => (await findMirror()) === undefined, `the mirror pod ${mirrorName} deleted after its manifest`, {
    timeoutMs: 30_000,
    intervalMs: 200,
  });
  await agent.stop();
  assert.equal(agent.child.exitCode, 0, `the agent exits 0 on SIGTERM (log:\n${agent.logs()})`);
  assert.doesNotMatch(agent.logs(), /Warning:/, 'no runtime warnings from the executable');
});

it('runs local-cluster from the Go sources it carries (the control plane binary comes from the shared cache)', async () => {
  const { path, dir } = executable();
  const state = await tempDir('kp-exe-cluster-');
  const child = spawn(path, ['local-cluster', '--dir', state, '--nodes', 'n1'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    // A first build of the control plane takes minutes; the integration tests before this one
    // (useControlPlane above) have the same sources in the cache, so this only starts it.
    const line = await waitFor(() => stdout.split('\n').find((l) => l.startsWith('{')), `local-cluster's ready line (stderr:\n${stderr})`, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const ready = JSON.parse(line) as { server: string; adminKubeconfig: string; nodeKubeconfigs: Record<string, string> };
    assert.match(ready.server, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.ok(existsSync(ready.adminKubeconfig), 'admin kubeconfig written');
    assert.ok(existsSync(ready.nodeKubeconfigs['n1']!), 'node kubeconfig written');
  } finally {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, `local-cluster exits 0 on SIGTERM (stderr:\n${stderr})`);
  }
});

it('runs demo --until-synced on the examples it carries, unpacked into a temporary directory', { timeout: 120_000 }, async () => {
  const { path, dir } = executable();
  const state = await tempDir('kp-exe-demo-');
  const { stdout } = await execFileAsync(path, ['demo', '--until-synced', '--dir', state], { cwd: dir, timeout: 110_000 });
  const header = /manifests in (\S+)/.exec(stdout);
  assert.ok(header, `the demo names its manifest directory:\n${stdout.slice(0, 400)}`);
  assert.match(header[1]!, /kubelet-pods-examples-[^/]+\/manifests$/, 'a temporary copy of the embedded examples/');
  await rm(dirname(header[1]!), { recursive: true, force: true });
  const rows = stdout.trim().split('\n\n').slice(-1)[0]!.split('\n').slice(1);
  const examples = (await readdir(new URL('../../../examples/manifests/', import.meta.url))).filter((f) => !f.startsWith('.'));
  assert.equal(rows.length, examples.length, `one row per example manifest:\n${rows.join('\n')}`);
  for (const row of rows) assert.match(row, /\byes\s+Running$/, `in sync and Running: ${row}`);
});
