// The node agent end to end, on the real kube-apiserver + etcd with node credentials: the
// behaviours the kubelet has promised for static pods since 2015 (kubelet-behaviour §17).
// Each test uses its own node identity so that mirrors of one test never meet another's agent.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { useControlPlane, readPodIfExists } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';

const NODES = ['e2e-create', 'e2e-kubectl', 'e2e-change', 'e2e-remove', 'e2e-broken', 'e2e-outage', 'e2e-http', 'e2e-standalone'];
const cp = useControlPlane({ nodes: NODES });

const agents: Agent[] = [];
after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
});


async function startAgent(node: string, flags: string[]): Promise<Agent> {
  const { config } = await resolveRunConfig([
    '--kubeconfig',
    cp.cluster.nodeKubeconfigs[node]!,
    '--hostname-override',
    node,
    ...flags,
  ]);
  const agent = createAgent({ config, housekeepingIntervalMs: 200, listenPorts: { readOnly: 0, healthz: 0 } });
  agents.push(agent);
  await agent.start();
  return agent;
}

async function podsOnNode(node: string): Promise<V1Pod[]> {
  const list = await cp.adminApi.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
  return list.items;
}

const MIRROR = 'kubernetes.io/config.mirror';
const HASH = 'kubernetes.io/config.hash';

describe('node agent on a real control plane', () => {
  it('a manifest appears: its mirror pod appears with the annotations, owner reference and a Running status', async () => {
    const node = 'e2e-create';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'web.yaml'), manifest('web', cp.namespace));
    const agent = await startAgent(node, ['--pod-manifest-path', dir]);
    // What the fleet's bounded start waits on: true once the Node exists, and at once after.
    assert.equal(await agent.nodeRegistered(20_000), true);
    assert.ok((await cp.adminApi.readNode({ name: node })).metadata?.uid);
    assert.equal(await agent.nodeRegistered(0), true);

    const mirror = await waitFor(async () => readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), 'mirror pod web', { timeoutMs: 20_000 });
    const staticPod = agent.podManager.getPodByName(cp.namespace, `web-${node}`)!;
    assert.ok(staticPod, 'the static pod is in the pod manager');
    assert.equal(mirror.metadata?.annotations?.[MIRROR], staticPod.metadata?.uid);
    assert.equal(mirror.metadata?.annotations?.[HASH], staticPod.metadata?.uid);
    assert.equal(mirror.metadata?.annotations?.['kubernetes.io/config.source'], 'file');
    assert.notEqual(mirror.metadata?.uid, staticPod.metadata?.uid, 'a mirror has its own UID');
    assert.equal(mirror.spec?.nodeName, node);
    const nodeObject = await cp.adminApi.readNode({ name: node });
    assert.deepEqual(
      mirror.metadata?.ownerReferences?.map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid, controller: o.controller })),
      [{ apiVersion: 'v1', kind: 'Node', name: node, uid: nodeObject.metadata?.uid, controller: true }],
    );
    const running = await waitFor(
      async () => {
        const p = await readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`);
        return p?.status?.phase === 'Running' ? p : undefined;
      },
      'mirror status Running',
      { timeoutMs: 20_000 },
    );
    assert.equal(running.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(running.status?.containerStatuses?.[0]?.name, 'main');
    // The kubelet's translation: the mirror's UID resolves to the static pod's.
    await waitFor(() => agent.podManager.translatePodUID(mirror.metadata!.uid!) === staticPod.metadata?.uid, 'translation');

    // /metrics: the kubelet's names where it has one, kubelet_pods_* for ours.
    const { port } = agent.addresses().readOnly!;
    const metrics = await waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return /^kubelet_mirror_pods 1$/m.test(text) ? text : undefined;
      },
      'kubelet_mirror_pods 1 after housekeeping',
    );
    assert.match(metrics, /^kubelet_desired_pods\{static="true"\} 1$/m);
    assert.match(metrics, /^kubelet_managed_ephemeral_containers 0$/m);
    assert.match(metrics, /^kubelet_pods_mirror_operations_total\{operation="create",result="success"\} 1$/m);
    assert.match(metrics, /^kubelet_pods_status_writes_total\{result="success"\} [1-9]/m);
  });

  it('the mirror is deleted with kubectl (graceful and forced): it is recreated', async () => {
    const node = 'e2e-kubectl';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'db.yaml'), manifest('db', cp.namespace));
    await startAgent(node, ['--pod-manifest-path', dir]);
    const name = `db-${node}`;
    const first = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, name), 'first mirror', { timeoutMs: 20_000 });

    // `kubectl delete pod`: graceful, so the API server only sets a deletionTimestamp.
    await cp.adminApi.deleteNamespacedPod({ namespace: cp.namespace, name });
    const second = await waitFor(
      async () => {
        const p = await readPodIfExists(cp.adminApi, cp.namespace, name);
        return p && p.metadata?.uid !== first.metadata?.uid && !p.metadata?.deletionTimestamp ? p : undefined;
      },
      'mirror recreated after a graceful delete',
      { timeoutMs: 20_000 },
    );
    assert.equal(second.metadata?.annotations?.[MIRROR], first.metadata?.annotations?.[MIRROR], 'same static pod, same hash');

    // `kubectl delete pod --force --grace-period=0`: gone at once.
    await cp.adminApi.deleteNamespacedPod({ namespace: cp.namespace, name, gracePeriodSeconds: 0 });
    const third = await waitFor(
      async () => {
        const p = await readPodIfExists(cp.adminApi, cp.namespace, name);
        return p && p.metadata?.uid !== second.metadata?.uid ? p : undefined;
      },
      'mirror recreated after a forced delete',
      { timeoutMs: 20_000 },
    );
    assert.ok(third.metadata?.uid);
    const mirrors = (await podsOnNode(node)).filter((p) => p.metadata?.name === name);
    assert.equal(mirrors.length, 1, 'exactly one mirror');
  });

  // The kubelet lifecycle: the old pod stops first, and the new one starts at its next start
  // retry (10–15 s), so the mirror is replaced 10–15 s after the edit.
  it('the manifest changes: the mirror is replaced with the new hash', async () => {
    const node = 'e2e-change';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    const path = join(dir, 'api.yaml');
    await writeFile(path, manifest('api', cp.namespace, 'nginx:1.27'));
    await startAgent(node, ['--pod-manifest-path', dir]);
    const name = `api-${node}`;
    const before = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, name), 'first mirror', { timeoutMs: 20_000 });

    // An editor's save: write a new file and rename it over the old one.
    await writeFile(join(dir, '.api.yaml.swp'), manifest('api', cp.namespace, 'nginx:1.28'));
    await rename(join(dir, '.api.yaml.swp'), path);
    const replaced = await waitFor(
      async () => {
        const p = await readPodIfExists(cp.adminApi, cp.namespace, name);
        return p && p.metadata?.annotations?.[MIRROR] !== before.metadata?.annotations?.[MIRROR] ? p : undefined;
      },
      'mirror replaced with the new hash',
      { timeoutMs: 30_000 },
    );
    assert.equal(replaced.spec?.containers[0]?.image, 'nginx:1.28');
    assert.notEqual(replaced.metadata?.uid, before.metadata?.uid);
  });

  it('the manifest is removed: the mirror is deleted', async () => {
    const node = 'e2e-remove';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'a.yaml'), manifest('a', cp.namespace));
    await writeFile(join(dir, 'b.yaml'), manifest('b', cp.namespace));
    await startAgent(node, ['--pod-manifest-path', dir]);
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `a-${node}`), 'mirror a', { timeoutMs: 20_000 });
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `b-${node}`), 'mirror b', { timeoutMs: 20_000 });
    await rm(join(dir, 'a.yaml'));
    await waitFor(async () => (await readPodIfExists(cp.adminApi, cp.namespace, `a-${node}`)) === undefined, 'mirror a deleted', {
      timeoutMs: 20_000,
    });
    assert.ok(await readPodIfExists(cp.adminApi, cp.namespace, `b-${node}`), 'mirror b untouched');
  });

  it('a broken manifest: a clear error, and the other pods untouched', async () => {
    const node = 'e2e-broken';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'good.yaml'), manifest('good', cp.namespace));
    const lines: Array<{ msg?: string; path?: string; err?: unknown }> = [];
    const capture = {
      debug: () => {},
      info: () => {},
      warn: (obj: object, msg?: string) => lines.push({ ...obj, msg }),
      error: (obj: object, msg?: string) => lines.push({ ...obj, msg }),
    };
    const { config } = await resolveRunConfig([
      '--kubeconfig', cp.cluster.nodeKubeconfigs[node]!, '--hostname-override', node, '--pod-manifest-path', dir,
    ]);
    const agent = createAgent({ config, logger: capture, housekeepingIntervalMs: 200, listenPorts: { readOnly: 0, healthz: 0 } });
    agents.push(agent);
    await agent.start();
    const good = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `good-${node}`), 'mirror good', { timeoutMs: 20_000 });

    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers: [ {name: x, image: ');
    await waitFor(() => lines.find((l) => JSON.stringify(l).includes(broken)), 'an error naming the broken file', { timeoutMs: 10_000 });
    await agent.mirrorsIdle();
    const still = await readPodIfExists(cp.adminApi, cp.namespace, `good-${node}`);
    assert.equal(still?.metadata?.uid, good.metadata?.uid, 'the good mirror was not touched');
    assert.equal(agent.podManager.getPods().length, 1);
  });

  it('the API server is stopped and started again: the agent recovers and converges', async () => {
    const node = 'e2e-outage';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'one.yaml'), manifest('one', cp.namespace));
    const agent = await startAgent(node, ['--pod-manifest-path', dir]);
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `one-${node}`), 'mirror one', { timeoutMs: 20_000 });

    await cp.cluster.stop();
    // Changes made while the API server is down must land once it is back.
    await writeFile(join(dir, 'two.yaml'), manifest('two', cp.namespace));
    await waitFor(() => agent.podManager.getPodByName(cp.namespace, `two-${node}`), 'the agent read two.yaml during the outage');
    await cp.cluster.start();

    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `two-${node}`), 'mirror two after the outage', { timeoutMs: 60_000 });
    const names = (await podsOnNode(node)).map((p) => p.metadata?.name).sort();
    assert.deepEqual(names, [`one-${node}`, `two-${node}`], 'nothing lost, nothing duplicated');
  });

  it('the HTTP source end to end: a PodList served like k0s does becomes mirror pods', async () => {
    const node = 'e2e-http';
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'PodList',
      items: [
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'proxy', namespace: cp.namespace }, spec: { containers: [{ name: 'p', image: 'envoy:1' }] } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'dns', namespace: cp.namespace }, spec: { containers: [{ name: 'd', image: 'coredns:1' }] } },
      ],
    });
    const server = createServer((req, res) => {
      if (req.url !== '/manifests') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/manifests`;
      await startAgent(node, ['--manifest-url', url]);
      const proxy = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `proxy-${node}`), 'mirror proxy', { timeoutMs: 20_000 });
      await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `dns-${node}`), 'mirror dns', { timeoutMs: 20_000 });
      assert.equal(proxy.metadata?.annotations?.['kubernetes.io/config.source'], 'http');
      // The file source's toleration has no key; the API server's DefaultTolerationSeconds
      // adds keyed ones (not-ready, unreachable) to every pod, mirrors included.
      const fileToleration = (t: { key?: string; effect?: string; operator?: string }) => !t.key && t.effect === 'NoExecute' && t.operator === 'Exists';
      assert.equal(proxy.spec?.tolerations?.some(fileToleration) ?? false, false, 'HTTP pods get no key-less NoExecute toleration');
    } finally {
      server.close();
    }
  });

  it('standalone mode: no kubeconfig, no mirrors, but sources read and /pods served', async () => {
    const node = 'e2e-standalone';
    const dir = await mkdtemp(join(tmpdir(), 'kp-e2e-'));
    await writeFile(join(dir, 'solo.yaml'), manifest('solo', cp.namespace));
    const { config } = await resolveRunConfig(['--hostname-override', node, '--pod-manifest-path', dir]);
    const agent = createAgent({ config, listenPorts: { readOnly: 0, healthz: 0 } });
    agents.push(agent);
    await agent.start();
    assert.equal(agent.connected, false);
    const { port, address } = agent.addresses().readOnly!;
    assert.equal(address, '127.0.0.1', 'endpoints bind to loopback by default');
    const list = await waitFor(
      async () => {
        const res = await fetch(`http://127.0.0.1:${port}/pods`);
        const json = (await res.json()) as { kind: string; items: V1Pod[] };
        return json.items.length === 1 ? json : undefined;
      },
      '/pods lists the static pod',
    );
    assert.equal(list.kind, 'PodList');
    assert.equal(list.items[0]?.metadata?.name, `solo-${node}`);
    assert.equal((await podsOnNode(node)).length, 0, 'no mirror pods in standalone mode');
  });
});
