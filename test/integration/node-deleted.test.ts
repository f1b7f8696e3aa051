// The agent's Node deleted while it runs (`kubectl delete node`, a cloud controller removing a
// machine): as the kubelet, which watches its own Node, the agent writes nothing for it from
// that moment: no mirror pod create (each would be refused `node "…" not found`), no Node
// status, no Event on the Node, and it does not register the Node again. The agent runs as
// users run it, with the default 10 s Node status period, and the API server's audit log is
// the record of what it sent. The control plane's garbage collector deletes the mirror, whose
// owner the Node was, as on a real cluster.

import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.js';
import { micros, readAuditLog, writeAuditPolicy } from '../helpers/audit-log.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'gone-node';
const cp = useControlPlane({ nodes: [NODE], auditPolicyFile: writeAuditPolicy() });
const agents: AgentProcess[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function nodeExists(): Promise<boolean> {
  return (await cp.adminApi.listNode({ fieldSelector: `metadata.name=${NODE}` })).items.length > 0;
}

it('after its Node is deleted the agent sends no mirror create, no Node status and no Event on the Node', async () => {
  const namespace = cp.namespace;
  const dir = await mkdtemp(join(tmpdir(), 'kp-gone-'));
  dirs.push(dir);
  await writeFile(join(dir, 'before.yaml'), podManifestYaml('before', namespace));
  const agent = startAgentProcess({ nodeName: NODE, kubeconfig: cp.cluster.nodeKubeconfigs[NODE]!, manifestDir: dir });
  agents.push(agent);
  const mirror = `before-${NODE}`;
  await waitFor(
    async () => (await cp.adminApi.listNamespacedPod({ namespace })).items.some((p) => p.metadata?.name === mirror && p.status?.phase === 'Running'),
    'the mirror pod Running',
    { timeoutMs: 30_000 },
  );

  // The agent's Events on the Node so far (the kubelet's MissingClusterDNS warning at the pod's
  // start), with their counts: none may be added or repeated from here on. The controller
  // manager's own (RemovingNode) are not the agent's.
  const nodeEvents = async (): Promise<string[]> =>
    (await cp.adminApi.listEventForAllNamespaces({ fieldSelector: `involvedObject.kind=Node,involvedObject.name=${NODE}` })).items
      .filter((e) => e.source?.component === 'kubelet' && e.source.host === NODE)
      .map((e) => `${e.metadata?.name} ${e.reason} x${e.count}: ${e.message}`);
  await delay(1000); // the agent writes Events in the background
  const eventsBefore = await nodeEvents();
  const deletedAt = micros(new Date().toISOString());
  await cp.adminApi.deleteNode({ name: NODE });
  await waitFor(
    async () => !(await cp.adminApi.listNamespacedPod({ namespace })).items.some((p) => p.metadata?.name === mirror),
    'the garbage collector to delete the mirror the Node owned',
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  // And a manifest written meanwhile.
  await writeFile(join(dir, 'after.yaml'), podManifestYaml('after', namespace));
  // More than a Node status period (10 s): the old agent re-read its Node only then.
  await delay(13_000);

  const user = `system:node:${NODE}`;
  const sent = readAuditLog(cp.cluster.auditLogFile!).filter((e) => e.user?.username === user && micros(e.requestReceivedTimestamp) > deletedAt);
  const describe = (e: (typeof sent)[number]) => `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.objectRef?.name ?? ''} ${e.responseStatus?.code}`;
  const mirrorCreates = sent.filter((e) => e.verb === 'create' && e.objectRef?.resource === 'pods');
  assert.deepEqual(mirrorCreates.map(describe), [], 'no mirror pod create after the deletion');
  const nodeWrites = sent.filter((e) => e.objectRef?.resource === 'nodes');
  assert.deepEqual(nodeWrites.map(describe), [], 'no Node create or status write after the deletion');

  assert.deepEqual(await nodeEvents(), eventsBefore, 'no Event on the deleted Node');
  const eventWrites = sent.filter((e) => e.objectRef?.resource === 'events' && e.objectRef.namespace === 'default');
  assert.deepEqual(eventWrites.map(describe), [], 'no Event written in the namespace of Node Events');
  assert.equal(await nodeExists(), false, 'the Node is not registered again');
  assert.ok(!(await cp.adminApi.listNamespacedPod({ namespace })).items.some((p) => p.metadata?.name === `after-${NODE}`), 'no mirror for the new manifest');
  await agent.stop();
});
