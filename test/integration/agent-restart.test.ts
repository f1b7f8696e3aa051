// An agent restart seen from the API server: a real node's containers outlive the kubelet, and
// a restarted agent's simulated runtime takes its pods over from their published statuses, so
// neither a static pod's mirror nor an ordinary pod bound to the node goes back to Pending or
// gets new containers (a ReplicaSet keeps its availability through an agent upgrade). Every
// change to the namespace's pods is watched for the whole restart: SIGTERM and, once more,
// SIGKILL.

import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Watch, type V1Pod } from '@kubernetes/client-node';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'restart-node';
const cp = useControlPlane({ nodes: [NODE] });
const agents: AgentProcess[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** What must not change across a restart: phase, readiness and each container's identity. */
function shape(pod: V1Pod): string {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const containers = (pod.status?.containerStatuses ?? []).map((c) => {
    const startedAt = c.state?.running?.startedAt;
    return `${c.name}:${c.containerID}:${startedAt === undefined ? 'not-running' : new Date(startedAt).toISOString()}:${c.restartCount}:${c.ready}`;
  });
  return `${pod.status?.phase} ready=${ready} ${containers.join(',')}`;
}

const isUp = (pod: V1Pod | undefined): boolean =>
  pod?.status?.phase === 'Running' && pod.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (pod.status.containerStatuses ?? []).every((c) => c.state?.running !== undefined);

function start(dir: string): AgentProcess {
  const agent = startAgentProcess({ nodeName: NODE, kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!, manifestDir: dir });
  agents.push(agent);
  return agent;
}

/** Until the process has logged its start, then `settleMs` more (a full status resync is 10 s). */
async function startedAndSettled(agent: AgentProcess, settleMs: number): Promise<void> {
  await waitFor(() => agent.logs().includes('"agent started"'), 'the restarted agent to start', { timeoutMs: 30_000, intervalMs: 50 });
  await delay(settleMs);
}

it('a restarted agent keeps its static and ordinary pods Running and Ready, with the same containers', async () => {
  const namespace = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'kp-restart-'));
  dirs.push(dir);
  await writeFile(join(dir, 'web.yaml'), podManifestYaml('web', namespace));
  let agent = start(dir);
  // The ordinary pod, bound to the node as the scheduler would.
  await waitFor(async () => (await cp.adminApi.listNode()).items.some((n) => n.metadata?.name === NODE), 'the Node', { timeoutMs: 30_000 });
  await cp.adminApi.createNamespacedPod({
    namespace,
    body: { metadata: { name: 'app' }, spec: { nodeName: NODE, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
  });
  const names = [`web-${NODE}`, 'app'];
  const list = async (): Promise<V1Pod[]> => (await cp.adminApi.listNamespacedPod({ namespace })).items;
  const up = await waitFor(
    async () => {
      const pods = await list();
      return names.every((n) => isUp(pods.find((p) => p.metadata?.name === n))) ? pods : undefined;
    },
    'both pods Running and Ready',
    { timeoutMs: 30_000 },
  );
  const expected = new Map(up.map((p) => [p.metadata!.name!, shape(p)]));
  const versions = new Map(up.map((p) => [p.metadata!.name!, p.metadata!.resourceVersion]));

  // Every change from here on, as the API server tells it.
  const seen: string[] = [];
  const watch = await new Watch(kubeConfigFromFile(cp.cluster.adminKubeconfig)).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { resourceVersion: (await cp.adminApi.listNamespacedPod({ namespace })).metadata?.resourceVersion },
    (type: string, pod: V1Pod) => seen.push(`${type} ${pod.metadata?.name}: ${shape(pod)}`),
    () => {},
  );
  try {
    await agent.stop();
    agent = start(dir);
    await startedAndSettled(agent, 12_000);
    // The same once more after SIGKILL: no chance to finish anything in flight.
    agent.child.kill('SIGKILL');
    await agent.stop();
    agent = start(dir);
    await startedAndSettled(agent, 12_000);
  } finally {
    watch.abort();
  }

  assert.deepEqual(seen, [], 'no change to either pod during both restarts');
  const now = await list();
  for (const name of names) {
    const pod = now.find((p) => p.metadata?.name === name);
    assert.ok(isUp(pod), `${name} Running and Ready`);
    assert.equal(shape(pod!), expected.get(name), `${name}: same containers`);
    assert.equal(pod!.metadata?.resourceVersion, versions.get(name), `${name}: not written`);
  }
  await agent.stop();
});
