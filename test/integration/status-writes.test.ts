// The status writes an ordinary pod costs the API server, counted on the real kube-apiserver
// through a recording proxy (test/differential/api-proxy.ts), with the agent's pod watch lagging
// behind the server as it does under load (the kwok benchmark's 1,000 nodes). The kubelet writes
// a pod's status twice to start it (Pending with its containers being created, then Running) and
// once to stop it (the terminal status), then deletes it (docs/performance.md, "Writes per pod").
//
// The lag is what made the agent write Running a third time: the echo of its Pending write
// arrived after Running was written, and the status writer's full batch (every 10 s) took that
// older copy for the server's status. The kubelet reads the pod before any write
// (status_manager.go, syncPod), so it never writes for such a copy. Here the pod's start takes
// 11 s (a `startDelay` scenario) and the pod watch lags 16 s, so a full batch surely falls
// between the echo of the Pending write and that of the Running write.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { podOfRequest, startClusterProxy, type RecordedRequest, type RecordingProxy } from '../differential/api-proxy.js';

const NODE = 'status-writes';
const WATCH_LAG_MS = 16_000;
const cp = useControlPlane({ nodes: [NODE] });
let agent: Agent | undefined;
let proxy: RecordingProxy | undefined;
let dir: string | undefined;
after(async () => {
  await agent?.stop();
  await proxy?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** What the node sent about pod `name`, in order: `PATCH status`, `DELETE`, … (successful ones). */
function writesAbout(requests: readonly RecordedRequest[], namespace: string, name: string): string[] {
  return requests
    .filter((r) => r.method !== 'GET' && r.status >= 200 && r.status < 300)
    .filter((r) => {
      const pod = podOfRequest(r.path);
      return pod?.namespace === namespace && pod.name === name;
    })
    .map((r) => `${r.method}${podOfRequest(r.path)?.subresource === undefined ? '' : ` ${podOfRequest(r.path)!.subresource}`}`);
}

it('an ordinary pod costs the kubelet\'s writes, two status PATCHes to start, one and the DELETE to stop, also with the pod watch lagging behind', async () => {
  const ns = cp.namespace;
  dir = await mkdtemp(join(tmpdir(), 'kp-status-writes-'));
  proxy = await startClusterProxy(cp.cluster, { watchDelayMs: (path) => (path.endsWith('/pods') ? WATCH_LAG_MS : 0) });
  const kubeconfig = join(dir, 'kubeconfig');
  await proxy.writeKubeconfig(cp.cluster.nodeKubeconfigs[NODE]!, kubeconfig);
  await writeFile(
    join(dir, 'kubelet.yaml'),
    stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', scenarios: [{ name: 'slow-start', match: { namespace: ns }, startDelay: '11s' }] }),
  );
  const { config } = await resolveRunConfig([
    '--config', join(dir, 'kubelet.yaml'),
    '--kubeconfig', kubeconfig,
    '--hostname-override', NODE,
    '--port', '0', '--read-only-port', '0', '--healthz-port', '0',
  ]);
  agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 } });
  await agent.start();

  await cp.adminApi.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name: 'counted' }, spec: { nodeName: NODE, terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
  });
  const slow = { timeoutMs: 120_000, intervalMs: 250 };
  await waitFor(async () => (await cp.adminApi.readNamespacedPod({ namespace: ns, name: 'counted' })).status?.phase === 'Running', 'the pod Running', slow);
  // The Running write's own echo, and every full batch that could still see an older copy, come
  // within a lag and a resync period.
  await new Promise((resolve) => setTimeout(resolve, WATCH_LAG_MS + 12_000));
  assert.deepEqual(writesAbout(proxy.requests, ns, 'counted'), ['PATCH status', 'PATCH status'], 'Pending, then Running: no status written again');

  await cp.adminApi.deleteNamespacedPod({ namespace: ns, name: 'counted' });
  await waitFor(
    () => cp.adminApi.readNamespacedPod({ namespace: ns, name: 'counted' }).then(
      () => false,
      (err: unknown) => (err as { code?: number }).code === 404,
    ),
    'the pod gone',
    slow,
  );
  assert.deepEqual(writesAbout(proxy.requests, ns, 'counted'), ['PATCH status', 'PATCH status', 'PATCH status', 'DELETE'], 'the terminal status, then the DELETE');
});
