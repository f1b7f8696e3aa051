// Kubernetes Events about static and mirror pods (docs/events.md) on the real kube-apiserver +
// etcd, with the agent authenticated as the node under the Node authorizer and NodeRestriction.
// Events are read back the way `kubectl describe` reads them: events by involvedObject field
// selector. A node's credentials may write events (create, patch) but not read them back (the
// Node authorizer's rules have no get or list on events); the first test pins that, so the
// reads use the admin identity, as a user running kubectl does.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionregistrationV1Api, type CoreV1Event, type V1Pod } from '@kubernetes/client-node';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { kubeConfigFromFile, useControlPlane, readPodIfExists } from '../helpers/control-plane.js';
import { podManifestYaml as manifest } from '../helpers/manifests.js';
import { kubectl } from '../helpers/kubectl.js';
import { flush, waitFor } from '../helpers/wait.js';

const NODES = ['ev-refused', 'ev-policy', 'ev-taken', 'ev-stuck', 'ev-bad', 'ev-dup', 'ev-drop', 'ev-off', 'ev-run', 'ev-dns'];
const cp = useControlPlane({ nodes: NODES });

const agents: Agent[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});


async function manifestDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kp-events-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

async function startAgent(node: string, dir: string, extra: string[] = []): Promise<Agent> {
  const { config } = await resolveRunConfig([
    '--kubeconfig', cp.cluster.nodeKubeconfigs[node]!, '--hostname-override', node, '--pod-manifest-path', dir, ...extra,
  ]);
  const agent = createAgent({ config, housekeepingIntervalMs: 200, listenPorts: { readOnly: 0, healthz: 0 } });
  agents.push(agent);
  await agent.start();
  return agent;
}

/** `kubectl describe node <node>`'s second query: the kubelet's events, whose UID is the node name. */
async function nodeEvents(node: string): Promise<CoreV1Event[]> {
  const fieldSelector = `involvedObject.kind=Node,involvedObject.name=${node},involvedObject.namespace=,involvedObject.uid=${node}`;
  return (await cp.adminApi.listEventForAllNamespaces({ fieldSelector })).items;
}

/** `kubectl describe pod <mirror>`'s query: for a mirror, the UID is its config.mirror annotation. */
async function mirrorEvents(mirror: V1Pod): Promise<CoreV1Event[]> {
  const { name, namespace, annotations } = mirror.metadata!;
  const uid = annotations!['kubernetes.io/config.mirror']!;
  const fieldSelector = `involvedObject.kind=Pod,involvedObject.name=${name},involvedObject.namespace=${namespace},involvedObject.uid=${uid}`;
  return (await cp.adminApi.listNamespacedEvent({ namespace: namespace!, fieldSelector })).items;
}

async function waitForEvent(read: () => Promise<CoreV1Event[]>, reason: string, match: (e: CoreV1Event) => boolean = () => true): Promise<CoreV1Event> {
  let seen: CoreV1Event[] = [];
  try {
    return await waitFor(
      async () => {
        seen = await read();
        return seen.find((e) => e.reason === reason && match(e));
      },
      `a ${reason} event`,
      { timeoutMs: 20_000, intervalMs: 100 },
    );
  } catch (err) {
    const got = seen.map((e) => `${e.reason} x${e.count}: ${e.message}`).join('\n');
    throw new Error(`${(err as Error).message}; events seen:\n${got || '(none)'}`);
  }
}

/**
 * A ValidatingAdmissionPolicy on pods of the test's namespace, denying `operations` where
 * `expression` is false. Resolves to its removal. It takes effect once the API server's policy
 * informer has it: callers probe with a dry run.
 */
async function applyPolicy(prefix: string, operations: string[], expression: string, message: string): Promise<() => Promise<void>> {
  const admission = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(AdmissionregistrationV1Api);
  const name = `${prefix}-${cp.namespace}`;
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations, resources: ['pods'] }] },
        validations: [{ expression, message }],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name },
      spec: {
        policyName: name,
        validationActions: ['Deny'],
        matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': cp.namespace } } },
      },
    },
  });
  return async () => {
    await admission.deleteValidatingAdmissionPolicyBinding({ name });
    await admission.deleteValidatingAdmissionPolicy({ name });
  };
}

function assertKubeletSource(event: CoreV1Event, node: string, type = 'Warning'): void {
  assert.deepEqual({ component: event.source?.component, host: event.source?.host }, { component: 'kubelet', host: node });
  assert.equal(event.reportingComponent, 'kubelet');
  assert.equal(event.reportingInstance, node);
  assert.equal(event.type, type);
}

describe('Kubernetes Events, written with node credentials', () => {
  it('a mirror refused by the API server (its namespace does not exist): FailedCreateMirrorPod on the Node, counted as it is retried', async () => {
    const node = 'ev-refused';
    const dir = await manifestDir({ 'web.yaml': manifest('web', 'no-such-namespace') });
    await startAgent(node, dir);
    const event = await waitForEvent(() => nodeEvents(node), 'FailedCreateMirrorPod');
    assertKubeletSource(event, node);
    assert.equal(event.metadata.namespace, 'default');
    assert.deepEqual(
      { kind: event.involvedObject.kind, name: event.involvedObject.name, uid: event.involvedObject.uid },
      { kind: 'Node', name: node, uid: node },
    );
    assert.match(event.message!, /^Static pod no-such-namespace\/web-ev-refused has no mirror pod: /);
    assert.match(event.message!, /namespaces "no-such-namespace" not found/, 'the server message');
    // Retries (0.5 s, 1 s, 2 s, … backoff) repeat the same event: one Event whose count grows (PATCH).
    const counted = await waitForEvent(() => nodeEvents(node), 'FailedCreateMirrorPod', (e) => (e.count ?? 0) >= 3);
    assert.equal(counted.metadata.name, event.metadata.name);
    assert.ok(counted.lastTimestamp! > counted.firstTimestamp!, 'lastTimestamp moves on');
    const all = (await nodeEvents(node)).filter((e) => e.reason === 'FailedCreateMirrorPod');
    assert.equal(all.length, 1, 'one Event, not one per retry');

    // The node may write events but not read them: reads above are an admin's, as kubectl's are.
    await assert.rejects(
      cp.nodeApi(node).listEventForAllNamespaces({ fieldSelector: `involvedObject.name=${node}` }),
      (err: { code?: number }) => err.code === 403,
    );
  });

  it('a mirror refused by a ValidatingAdmissionPolicy: FailedCreateMirrorPod with the policy message', async () => {
    const node = 'ev-policy';
    const remove = await applyPolicy(
      'no-mirrors',
      ['CREATE'],
      "!has(object.metadata.annotations) || !('kubernetes.io/config.mirror' in object.metadata.annotations)",
      'mirror pods are not welcome in this namespace',
    );
    try {
      // A policy takes effect once the API server's policy informer has it: probe with a dry run.
      await waitFor(
        async () => {
          try {
            await cp.adminApi.createNamespacedPod({
              namespace: cp.namespace,
              dryRun: 'All',
              body: {
                metadata: { name: 'probe', annotations: { 'kubernetes.io/config.mirror': 'x' } },
                spec: { nodeName: node, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
              },
            });
            return false;
          } catch (err) {
            return (err as { code?: number }).code === 422 || (err as { code?: number }).code === 403;
          }
        },
        'the policy in force',
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      const dir = await manifestDir({ 'web.yaml': manifest('web', cp.namespace) });
      await startAgent(node, dir);
      const event = await waitForEvent(() => nodeEvents(node), 'FailedCreateMirrorPod', (e) => /not welcome/.test(e.message ?? ''));
      assertKubeletSource(event, node);
      assert.match(event.message!, /ValidatingAdmissionPolicy .*no-mirrors-.* denied request: mirror pods are not welcome in this namespace/);
      assert.equal(await readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), undefined, 'no mirror');
    } finally {
      await remove();
    }
  });

  it('another pod holds the mirror name (one the node may not even read): MirrorPodConflict on the Node', async () => {
    const node = 'ev-taken';
    const name = `web-${node}`;
    await cp.adminApi.createNamespacedPod({
      namespace: cp.namespace,
      body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    });
    const dir = await manifestDir({ 'web.yaml': manifest('web', cp.namespace) });
    await startAgent(node, dir);
    const event = await waitForEvent(() => nodeEvents(node), 'MirrorPodConflict');
    assertKubeletSource(event, node);
    assert.match(event.message!, new RegExp(`^Static pod ${cp.namespace}/${name} has no mirror pod: .*a pod of that name already exists`));
    assert.equal((await readPodIfExists(cp.adminApi, cp.namespace, name))?.metadata?.annotations?.['kubernetes.io/config.mirror'], undefined, 'the holder is left alone');
  });

  it('an outdated mirror whose deletion a policy refuses: MirrorPodConflict on the Node and on that mirror', async () => {
    const node = 'ev-stuck';
    const name = `web-${node}`;
    const dir = await manifestDir({ 'web.yaml': manifest('web', cp.namespace, 'nginx:1.27') });
    await startAgent(node, dir);
    const old = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, name), 'the first mirror', { timeoutMs: 20_000 });
    const remove = await applyPolicy('no-deletes', ['DELETE'], 'false', 'pods here are kept');
    try {
      await waitFor(
        async () => {
          try {
            await cp.adminApi.deleteNamespacedPod({ namespace: cp.namespace, name, dryRun: 'All' });
            return false;
          } catch {
            return true;
          }
        },
        'the policy in force',
        { timeoutMs: 20_000, intervalMs: 100 },
      );
      await writeFile(join(dir, '.web.yaml.new'), manifest('web', cp.namespace, 'nginx:1.28'));
      await rename(join(dir, '.web.yaml.new'), join(dir, 'web.yaml'));
      const event = await waitForEvent(() => nodeEvents(node), 'MirrorPodConflict');
      assertKubeletSource(event, node);
      const oldHash = old.metadata!.annotations!['kubernetes.io/config.mirror']!;
      assert.match(event.message!, new RegExp(`^Static pod ${cp.namespace}/${name} has no up-to-date mirror pod: the mirror pod in place \\(config.mirror "${oldHash}"\\) could not be deleted: .*pods here are kept`));
      // On the mirror in the way, as `kubectl describe pod` finds it (by its config.mirror hash).
      const podEvent = await waitForEvent(() => mirrorEvents(old), 'MirrorPodConflict');
      assert.equal(podEvent.message, event.message);
      assert.equal((await readPodIfExists(cp.adminApi, cp.namespace, name))?.metadata?.uid, old.metadata?.uid, 'the old mirror is still there');
    } finally {
      await remove();
    }
  });

  it("a static pod's containers: the kubelet's Pulling, Pulled, Created, Started on the mirror with the container's field path, Killing on removal; MissingClusterDNS on the Node and the pod", async () => {
    const node = 'ev-run';
    const dir = await manifestDir({ 'web.yaml': manifest('web', cp.namespace) });
    await startAgent(node, dir);
    const mirror = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), 'mirror web', { timeoutMs: 20_000 });
    const started = await waitForEvent(() => mirrorEvents(mirror), 'Started');
    assertKubeletSource(started, node, 'Normal');
    assert.equal(started.involvedObject.fieldPath, 'spec.containers{main}');
    assert.equal(started.message, 'Started container main');
    const reasons = (await mirrorEvents(mirror)).map((e) => e.reason).sort();
    assert.deepEqual(reasons, ['Created', 'MissingClusterDNS', 'Pulled', 'Pulling', 'Started']);
    const dns = await waitForEvent(() => nodeEvents(node), 'MissingClusterDNS');
    assert.equal(dns.type, 'Warning');
    await rm(join(dir, 'web.yaml'));
    const killing = await waitForEvent(() => mirrorEvents(mirror), 'Killing');
    assert.equal(killing.message, 'Stopping container main');
  });

  it('with clusterDNS configured, no MissingClusterDNS', async () => {
    const node = 'ev-dns';
    const dir = await manifestDir({ 'web.yaml': manifest('web', cp.namespace) });
    await startAgent(node, dir, ['--cluster-dns', '10.96.0.10']);
    const mirror = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), 'mirror web', { timeoutMs: 20_000 });
    await waitForEvent(() => mirrorEvents(mirror), 'Started');
    assert.deepEqual((await mirrorEvents(mirror)).filter((e) => e.reason === 'MissingClusterDNS'), []);
    assert.deepEqual((await nodeEvents(node)).filter((e) => e.reason === 'MissingClusterDNS'), []);
  });

  it('a manifest rejected at decode: FailedDecodeStaticPod on the Node with the file and the reason; the good pod still gets its mirror', async () => {
    const node = 'ev-bad';
    const dir = await manifestDir({
      'good.yaml': manifest('good', cp.namespace),
      'secret.yaml': `${manifest('secret', cp.namespace)}    env:\n    - name: X\n      valueFrom: {secretKeyRef: {name: s, key: k}}\n`,
    });
    await startAgent(node, dir);
    const event = await waitForEvent(() => nodeEvents(node), 'FailedDecodeStaticPod');
    assertKubeletSource(event, node);
    assert.match(event.message!, new RegExp(`^Static pod manifest "${join(dir, 'secret.yaml')}" ignored: `));
    assert.match(event.message!, /references secret "s" \(spec\.containers\[0\]\.env\[0\]\.valueFrom\.secretKeyRef\)$/, 'the reason');
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `good-${node}`), 'mirror good', { timeoutMs: 20_000 });
  });

  it("a duplicate manifest: DuplicateStaticPod on the Node naming both files, and the kubelet's FailedValidation where kubectl describe pod finds it", async () => {
    const node = 'ev-dup';
    const dir = await manifestDir({ 'a.yaml': manifest('web', cp.namespace, 'nginx:1.27'), 'b.yaml': manifest('web', cp.namespace, 'nginx:1.28') });
    await startAgent(node, dir);
    const event = await waitForEvent(() => nodeEvents(node), 'DuplicateStaticPod');
    assertKubeletSource(event, node);
    assert.equal(
      event.message,
      `Static pod ${cp.namespace}/web-${node} from "${join(dir, 'b.yaml')}" ignored: "${join(dir, 'a.yaml')}" of source "file" defines a pod of the same name, which is kept`,
    );
    const mirror = await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), 'the mirror of a.yaml', { timeoutMs: 20_000 });
    assert.equal(mirror.spec?.containers[0]?.image, 'nginx:1.27', 'the first file in byte order is kept');
    const podEvent = await waitForEvent(() => mirrorEvents(mirror), 'FailedValidation');
    assertKubeletSource(podEvent, node);
    assert.equal(podEvent.involvedObject.kind, 'Pod');
    assert.equal(podEvent.involvedObject.uid, mirror.metadata?.annotations?.['kubernetes.io/config.mirror']);
    assert.match(podEvent.message!, new RegExp(`^Error validating pod web-${node}_${cp.namespace}\\(.+\\) from file due to duplicate pod name "web-${node}", ignoring$`));

    // The real kubectl shows both.
    const nodeText = await kubectl(cp.cluster.adminKubeconfig, 'describe', 'node', node);
    assert.match(nodeText.split('Events:')[1] ?? '', /Warning\s+DuplicateStaticPod\s+.*kubelet\s+Static pod /);
    const podText = await kubectl(cp.cluster.adminKubeconfig, 'describe', 'pod', '-n', cp.namespace, `web-${node}`);
    assert.match(podText.split('Events:')[1] ?? '', /Warning\s+FailedValidation\s+.*kubelet\s+Error validating pod /);
  });

  it('an event the API server refuses (its namespace does not exist) is logged once and dropped; the agent carries on', async () => {
    const node = 'ev-drop';
    const lines: Array<Record<string, unknown>> = [];
    const capture = {
      debug: () => {},
      info: (obj: object, msg?: string) => lines.push({ ...obj, msg, level: 'info' }),
      warn: (obj: object, msg?: string) => lines.push({ ...obj, msg, level: 'warn' }),
      error: () => {},
    };
    // A duplicate in a namespace that does not exist: its FailedValidation (in that namespace)
    // cannot be written; the Node's DuplicateStaticPod (in `default`) can.
    const dir = await manifestDir({
      'a.yaml': manifest('dup', 'no-such-namespace'),
      'b.yaml': manifest('dup', 'no-such-namespace'),
      'good.yaml': manifest('good', cp.namespace),
    });
    const { config } = await resolveRunConfig(['--kubeconfig', cp.cluster.nodeKubeconfigs[node]!, '--hostname-override', node, '--pod-manifest-path', dir]);
    const agent = createAgent({ config, logger: capture, housekeepingIntervalMs: 200, listenPorts: { readOnly: 0, healthz: 0 } });
    agents.push(agent);
    await agent.start();
    await waitForEvent(() => nodeEvents(node), 'DuplicateStaticPod');
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `good-${node}`), 'the good mirror', { timeoutMs: 20_000 });
    // Written after the refused one: dup's mirror cannot be created in that namespace either.
    await waitForEvent(() => nodeEvents(node), 'FailedCreateMirrorPod');
    await agent.eventsIdle();
    const failures = lines.filter((l) => l.msg === 'event write failed; dropping events until a write succeeds');
    assert.equal(failures.length, 1, 'logged once');
    assert.equal(failures[0]!.errorCode, 'KP_ERR_EVENT_WRITE');
    assert.equal(failures[0]!.httpStatus, 404);
    assert.equal(failures[0]!.eventReason, 'FailedValidation');
    assert.ok(lines.some((l) => l.msg === 'event writes succeed again'), 'the next write succeeded');
    assert.doesNotMatch(JSON.stringify(lines), /Bearer|authorization/i);
  });

  it('--events=false: the same problems write no Event', async () => {
    const node = 'ev-off';
    const dir = await manifestDir({ 'a.yaml': manifest('web', cp.namespace), 'b.yaml': manifest('web', cp.namespace), 'bad.yaml': 'not: [a pod' });
    const agent = await startAgent(node, dir, ['--events=false']);
    await waitFor(() => readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`), 'the mirror', { timeoutMs: 20_000 });
    await waitFor(() => agent.allSourcesReady(), 'sources ready');
    await agent.eventsIdle();
    await flush();
    assert.deepEqual(await nodeEvents(node), []);
  });
});
