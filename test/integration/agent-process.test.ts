// The agent as users run it: the `kubelet-pods run` process, killed with SIGKILL and started
// again. The restarted agent adopts the mirrors that still match, replaces the outdated one,
// deletes the orphan and creates what is new, with no duplicates.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { V1Pod } from '@kubernetes/client-node';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';

const NODE = 'proc-node';
const cp = useControlPlane({ nodes: [NODE] });
// The package's `bin` (tools/exe/bin-bundle.ts), as `npx kubelet-pods run` starts it.
const cli = fileURLToPath(new URL('../../../dist/bin/main.js', import.meta.url));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

const MIRROR = 'kubernetes.io/config.mirror';
const HASH = 'kubernetes.io/config.hash';


function startAgentProcess(dir: string): { child: ChildProcess; stderr: () => string } {
  const child = spawn(
    process.execPath,
    [cli, 'run', '--kubeconfig', cp.cluster.nodeKubeconfigs[NODE]!, '--hostname-override', NODE, '--pod-manifest-path', dir, '--healthz-port', '0', '--read-only-port', '0', '--port', '0'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, stderr: () => err };
}

async function mirrors(): Promise<V1Pod[]> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${NODE}` });
  return list.items.filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
}

it('SIGKILL and restart: same mirrors for unchanged pods, outdated replaced, orphan deleted, no duplicates', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-proc-'));
  const names = Array.from({ length: 12 }, (_, i) => `app-${i}`);
  for (const n of names) await writeFile(join(dir, `${n}.yaml`), manifest(n, cp.namespace, 'nginx:1.27'));

  const first = startAgentProcess(dir);
  const before = await waitFor(
    async () => {
      const m = await mirrors();
      return m.length === names.length ? m : undefined;
    },
    'a mirror for every manifest',
    { timeoutMs: 30_000 },
  );
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));

  // While the agent is dead: one manifest changes, one goes away, one is new.
  await writeFile(join(dir, 'app-0.yaml'), manifest('app-0', cp.namespace, 'nginx:1.28'));
  await rm(join(dir, 'app-1.yaml'));
  await writeFile(join(dir, 'app-new.yaml'), manifest('app-new', cp.namespace, 'nginx:1.27'));

  const second = startAgentProcess(dir);
  const expected = [...names.filter((n) => n !== 'app-1'), 'app-new'].map((n) => `${n}-${NODE}`).sort();
  const after_ = await waitFor(
    async () => {
      const m = await mirrors();
      const current = m.filter((p) => !p.metadata?.deletionTimestamp);
      const names_ = current.map((p) => p.metadata!.name!).sort();
      const app0 = current.find((p) => p.metadata?.name === `app-0-${NODE}`);
      const done = JSON.stringify(names_) === JSON.stringify(expected) && app0?.spec?.containers[0]?.image === 'nginx:1.28';
      return done && m.length === expected.length ? m : undefined;
    },
    'the restarted agent converges',
    { timeoutMs: 30_000 },
  );

  const uidBefore = new Map(before.map((p) => [p.metadata!.name!, p.metadata!.uid!]));
  for (const pod of after_) {
    const name = pod.metadata!.name!;
    assert.equal(pod.metadata?.annotations?.[MIRROR], pod.metadata?.annotations?.[HASH], `${name}: mirror hash matches`);
    if (name === `app-0-${NODE}` || name === `app-new-${NODE}`) {
      assert.notEqual(pod.metadata?.uid, uidBefore.get(name), `${name}: a new mirror`);
    } else {
      assert.equal(pod.metadata?.uid, uidBefore.get(name), `${name}: the existing mirror was adopted, not recreated`);
    }
  }
  assert.equal(new Set(after_.map((p) => p.metadata?.name)).size, after_.length, 'no duplicates');

  second.child.kill('SIGTERM');
  const code = await new Promise((resolve) => second.child.once('exit', resolve));
  assert.equal(code, 0, `clean exit on SIGTERM; stderr:\n${second.stderr().slice(-2000)}`);
  assert.equal((await mirrors()).length, expected.length, 'mirror pods are left in place on exit');
});
