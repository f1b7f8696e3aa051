// Init containers as users see them on the real control plane: the mirror of a static pod whose
// init container keeps failing shows it in CrashLoopBackOff (`kubectl get pods`:
// Init:CrashLoopBackOff) while the pod stays Pending; under restartPolicy Never the pod fails
// (Init:Error) and is never run again. The failures are planned with the simulated runtime's
// `simulation.kubelet-pods.io/exit` annotation.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { kubectl } from '../helpers/kubectl.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'init-node';
const cp = useControlPlane({ nodes: [NODE] });
let agent: Agent | undefined;
after(async () => agent?.stop());

function manifest(name: string, namespace: string, restartPolicy: string, exit: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, annotations: { 'simulation.kubelet-pods.io/exit': exit } },
    spec: {
      restartPolicy,
      terminationGracePeriodSeconds: 1,
      initContainers: [
        { name: 'proxy', image: 'registry.k8s.io/pause:3.10', restartPolicy: 'Always' },
        { name: 'setup', image: 'registry.k8s.io/pause:3.10' },
      ],
      containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }],
    },
  });
}

const mirror = (name: string): Promise<V1Pod | undefined> => cp.adminApi.readNamespacedPod({ name: `${name}-${NODE}`, namespace: cp.namespace }).catch(() => undefined);
const setupOf = (p: V1Pod | undefined) => p?.status?.initContainerStatuses?.find((c) => c.name === 'setup');

it('a failing init container: CrashLoopBackOff on the mirror under Always, Failed under Never, as kubectl shows them', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-init-'));
  const ns = cp.namespace;
  await writeFile(join(dir, 'looping.yaml'), manifest('looping', ns, 'Always', 'setup=1@1'));
  await writeFile(join(dir, 'failing.yaml'), manifest('failing', ns, 'Never', 'setup=2@1'));
  const { config } = await resolveRunConfig(['--kubeconfig', cp.cluster.nodeKubeconfigs[NODE]!, '--hostname-override', NODE, '--pod-manifest-path', dir]);
  agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 } });
  await agent.start();

  // Always: the first failure restarts at once, the second backs off 10 s.
  const looping = await waitFor(async () => {
    const p = await mirror('looping');
    return setupOf(p)?.state?.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
  }, 'looping: setup in CrashLoopBackOff', { timeoutMs: 30_000, intervalMs: 200 });
  assert.equal(looping?.status?.phase, 'Pending');
  assert.equal(setupOf(looping)?.lastState?.terminated?.exitCode, 1);
  assert.equal(setupOf(looping)?.restartCount, 1);
  assert.match(setupOf(looping)?.state?.waiting?.message ?? '', /^back-off 10s restarting failed container=setup pod=looping-init-node_/);
  assert.equal(looping?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing');
  const initialized = looping?.status?.conditions?.find((c) => c.type === 'Initialized');
  assert.deepEqual([initialized?.status, initialized?.message], ['False', 'containers with incomplete status: [setup]']);

  // Never: the pod fails at its init container's first failure, its sidecar stopped.
  const failing = await waitFor(async () => {
    const p = await mirror('failing');
    return p?.status?.phase === 'Failed' ? p : undefined;
  }, 'failing: Failed', { timeoutMs: 30_000, intervalMs: 200 });
  assert.equal(setupOf(failing)?.state?.terminated?.exitCode, 2);
  assert.ok(failing?.status?.initContainerStatuses?.find((c) => c.name === 'proxy')?.state?.terminated, 'the sidecar stopped');
  assert.equal(failing?.status?.containerStatuses?.[0]?.state?.waiting?.reason, 'PodInitializing', 'main never started');

  const table = await kubectl(cp.cluster.adminKubeconfig, 'get', 'pods', '-n', ns, '--no-headers', '-o', 'custom-columns=NAME:.metadata.name', '--field-selector', `spec.nodeName=${NODE}`);
  assert.deepEqual(table.trim().split('\n').sort(), [`failing-${NODE}`, `looping-${NODE}`]);
  const wide = await kubectl(cp.cluster.adminKubeconfig, 'get', 'pods', '-n', ns, '--no-headers', '--field-selector', `spec.nodeName=${NODE}`);
  assert.match(wide, new RegExp(`^looping-${NODE}\\s+\\S+\\s+Init:CrashLoopBackOff\\s`, 'm'));
  assert.match(wide, new RegExp(`^failing-${NODE}\\s+\\S+\\s+Init:Error\\s`, 'm'));
  // A pod that failed is not run again: its init container keeps its one failure.
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal(setupOf(await mirror('failing'))?.restartCount, 0);
  assert.equal((await mirror('failing'))?.status?.phase, 'Failed');
});
