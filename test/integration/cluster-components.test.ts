// The local control plane's kube-scheduler and kube-controller-manager: what they do for the
// tests (default ServiceAccounts, Deployments scheduled onto a Node, namespaces that finish
// deleting, garbage collection of pods owned by a deleted Node), that they are left out when
// asked, and that they never outlive the control plane. (No kubelet counterpart: this is the
// project's own test infrastructure.)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';

import { AppsV1Api, CertificatesV1Api, CoreV1Api, type V1Node } from '@kubernetes/client-node';
import forge from 'node-forge';

import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { coreApiFromFile, kubeConfigFromFile, waitForDefaultServiceAccount } from '../helpers/control-plane.js';
import { waitFor } from '../helpers/wait.js';

const notFound = (err: unknown): boolean => (err as { code?: number }).code === 404;

/** PIDs of processes whose command line mentions `text` (here: a cluster's state directory). */
function processesMentioning(text: string): Array<{ pid: number; args: string[] }> {
  const out: Array<{ pid: number; args: string[] }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (args.some((a) => a.includes(text))) out.push({ pid: Number(entry), args });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

const componentProcesses = (cluster: LocalCluster): number[] =>
  processesMentioning(cluster.dir).filter((p) => p.args[1] === 'component').map((p) => p.pid);

/** A Node with room for pods, created as admin: nothing runs on it, the scheduler only binds. */
async function createSchedulableNode(api: CoreV1Api, name: string): Promise<V1Node> {
  return api.createNode({
    body: {
      metadata: { name },
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      },
    },
  });
}

describe('with kube-scheduler and kube-controller-manager (the default)', () => {
  let cluster: LocalCluster;
  let admin: CoreV1Api;
  let apps: AppsV1Api;

  before(async () => {
    cluster = await startLocalCluster({ nodes: ['node-1'] });
    admin = coreApiFromFile(cluster.adminKubeconfig);
    apps = kubeConfigFromFile(cluster.adminKubeconfig).makeApiClient(AppsV1Api);
  });
  after(async () => {
    await cluster?.dispose();
  });

  it('the ready line names both components, and each runs as a child process', () => {
    assert.deepEqual(cluster.components, ['kube-scheduler', 'kube-controller-manager']);
    assert.equal(componentProcesses(cluster).length, 2);
  });

  it('a new namespace gets its default ServiceAccount and the kube-root-ca.crt ConfigMap', async () => {
    await admin.createNamespace({ body: { metadata: { name: 'sa-test' } } });
    await waitForDefaultServiceAccount(admin, 'sa-test');
    const ca = await waitFor(
      () => admin.readNamespacedConfigMap({ namespace: 'sa-test', name: 'kube-root-ca.crt' }).catch((err: unknown) => (notFound(err) ? undefined : Promise.reject(err))),
      'the kube-root-ca.crt ConfigMap',
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.equal(ca.data?.['ca.crt'], readFileSync(cluster.caFile, 'utf8'), '--root-ca-file is the cluster CA');
  });

  it("a Deployment's pods are created and bound to the Node", async () => {
    await createSchedulableNode(admin, 'worker-1');
    await admin.createNamespace({ body: { metadata: { name: 'deploy-test' } } });
    await waitForDefaultServiceAccount(admin, 'deploy-test');
    await apps.createNamespacedDeployment({
      namespace: 'deploy-test',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [{ name: 'web', image: 'registry.k8s.io/pause:3.10' }],
              // The Node never reports Ready, so it keeps its not-ready taints; tolerate them.
              tolerations: [{ operator: 'Exists' }],
            },
          },
        },
      },
    });
    const pods = await waitFor(
      async () => {
        const list = await admin.listNamespacedPod({ namespace: 'deploy-test', labelSelector: 'app=web' });
        return list.items.length === 2 && list.items.every((p) => p.spec?.nodeName === 'worker-1') ? list.items : undefined;
      },
      'two pods of the Deployment bound to worker-1',
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const events = await admin.listNamespacedEvent({ namespace: 'deploy-test', fieldSelector: `involvedObject.name=${pods[0]!.metadata!.name!}` });
    assert.ok(
      events.items.some((e) => e.reason === 'Scheduled' && (e.reportingComponent === 'default-scheduler' || e.source?.component === 'default-scheduler')),
      `a Scheduled event from the scheduler, got ${JSON.stringify(events.items.map((e) => e.reason))}`,
    );
  });

  it('a deleted namespace finishes deleting, its content with it', async () => {
    await admin.createNamespace({ body: { metadata: { name: 'gone-test' } } });
    await admin.createNamespacedConfigMap({ namespace: 'gone-test', body: { metadata: { name: 'content' }, data: { a: 'b' } } });
    await admin.deleteNamespace({ name: 'gone-test' });
    await waitFor(
      () => admin.readNamespace({ name: 'gone-test' }).then(() => false, (err: unknown) => (notFound(err) ? true : Promise.reject(err))),
      'namespace gone-test to disappear',
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  });

  it('a pod owned by a Node (as a mirror pod is) is garbage-collected when the Node is deleted', async () => {
    const node = await createSchedulableNode(admin, 'owner-1');
    await admin.createNamespace({ body: { metadata: { name: 'gc-test' } } });
    await waitForDefaultServiceAccount(admin, 'gc-test');
    await admin.createNamespacedPod({
      namespace: 'gc-test',
      body: {
        metadata: { name: 'owned', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'owner-1', uid: node.metadata!.uid!, controller: true }] },
        // Left unscheduled (no such scheduler), so its deletion needs no kubelet.
        spec: { schedulerName: 'nobody', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
      },
    });
    await admin.deleteNode({ name: 'owner-1' });
    await waitFor(
      () => admin.readNamespacedPod({ namespace: 'gc-test', name: 'owned' }).then(() => false, (err: unknown) => (notFound(err) ? true : Promise.reject(err))),
      'the pod owned by the deleted Node to be deleted',
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  });

  it('a CertificateSigningRequest, once approved, is signed by the cluster CA', async () => {
    const keys = forge.pki.rsa.generateKeyPair(2048);
    const csr = forge.pki.createCertificationRequest();
    csr.publicKey = keys.publicKey;
    csr.setSubject([{ name: 'commonName', value: 'csr-user' }]);
    csr.sign(keys.privateKey, forge.md.sha256.create());
    const certificates = kubeConfigFromFile(cluster.adminKubeconfig).makeApiClient(CertificatesV1Api);
    const request = Buffer.from(forge.pki.certificationRequestToPem(csr)).toString('base64');
    await certificates.createCertificateSigningRequest({
      body: { metadata: { name: 'csr-user' }, spec: { request, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] } },
    });
    const pending = await certificates.readCertificateSigningRequest({ name: 'csr-user' });
    pending.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'Test', message: 'approved by the test' }] };
    await certificates.replaceCertificateSigningRequestApproval({ name: 'csr-user', body: pending });
    const signed = await waitFor(
      async () => (await certificates.readCertificateSigningRequest({ name: 'csr-user' })).status?.certificate,
      'the signed certificate',
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const cert = forge.pki.certificateFromPem(Buffer.from(signed, 'base64').toString('utf8'));
    assert.equal(cert.subject.getField('CN').value, 'csr-user');
    assert.equal(cert.issuer.getField('CN').value, 'kubelet-pods-local-ca');
  });

  it('restart brings the components back; stop leaves none behind', async () => {
    const beforeRestart = componentProcesses(cluster);
    await cluster.restart();
    assert.deepEqual(cluster.components, ['kube-scheduler', 'kube-controller-manager']);
    const afterRestart = componentProcesses(cluster);
    assert.equal(afterRestart.length, 2);
    assert.ok(afterRestart.every((pid) => !beforeRestart.includes(pid)), 'new processes');
    await admin.createNamespace({ body: { metadata: { name: 'after-restart' } } });
    await waitForDefaultServiceAccount(admin, 'after-restart');
    await cluster.stop();
    assert.deepEqual(componentProcesses(cluster), [], 'the components exit before the control plane does');
    await cluster.start();
  });

  it('the components stop by themselves when the control plane is killed outright', async () => {
    const parent = processesMentioning(cluster.dir).find((p) => p.args[1] !== 'component' && p.args.some((a) => a.startsWith('--dir=')));
    assert.ok(parent !== undefined, 'the control plane process');
    assert.equal(componentProcesses(cluster).length, 2);
    process.kill(parent.pid, 'SIGKILL');
    // Their stdin pipe closes with the parent: they stop as on SIGTERM.
    await waitFor(() => componentProcesses(cluster).length === 0, 'the components to exit', { timeoutMs: 40_000, intervalMs: 100 });
    await cluster.stop(); // the cluster notices the program has gone
  });
});

describe('without them (scheduler: false, controllerManager: false)', () => {
  let cluster: LocalCluster;
  let admin: CoreV1Api;

  before(async () => {
    cluster = await startLocalCluster({ nodes: ['node-1'], scheduler: false, controllerManager: false });
    admin = coreApiFromFile(cluster.adminKubeconfig);
  });
  after(async () => {
    await cluster?.dispose();
  });

  it('nothing else runs, no ServiceAccount appears and a pod stays unbound', async () => {
    assert.deepEqual(cluster.components, []);
    assert.deepEqual(componentProcesses(cluster), []);
    await createSchedulableNode(admin, 'worker-1');
    await admin.createNamespace({ body: { metadata: { name: 'quiet' } } });
    await delay(5_000);
    await assert.rejects(admin.readNamespacedServiceAccount({ namespace: 'quiet', name: 'default' }), notFound);
    // Made by hand, as the test helpers did before the controller manager ran.
    await admin.createNamespacedServiceAccount({ namespace: 'quiet', body: { metadata: { name: 'default' } } });
    await admin.createNamespacedPod({
      namespace: 'quiet',
      body: { metadata: { name: 'pending' }, spec: { tolerations: [{ operator: 'Exists' }], containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    });
    await delay(3_000);
    const pod = await admin.readNamespacedPod({ namespace: 'quiet', name: 'pending' });
    assert.equal(pod.spec?.nodeName, undefined);
  });
});
