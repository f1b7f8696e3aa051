// deploy/fleet/, the kustomize base of `kubelet-pods fleet` (docs/fleet.md, "On Kubernetes"):
// valid for a real API server (a server-side dry run with the real kubectl), and its ClusterRole
// is the one the fleet tests run with (test/integration/fleet.test.ts, via issueFleetToken). Its
// FlowSchema puts the fleet's Lease and Node requests in the kubelet's priority level, as the
// API server's own Priority and Fairness headers show.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FlowcontrolApiserverV1Api } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { FLEET_CLUSTER_ROLE_FILE, issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { createClusterAccess } from '../../src/kube/cluster-access.js';
import { readKubeConfigFile } from '../../src/kube/kubeconfig.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { kubectl } from '../helpers/kubectl.js';

const BASE = fileURLToPath(new URL('../../../deploy/fleet', import.meta.url));
const cp = useControlPlane({ nodes: ['fleet-deploy-unused'] });

it('deploy/fleet passes a server-side dry run on the real API server, and its fleet file is valid', async () => {
  // The namespace exists for real first: a dry run creates nothing, so the namespaced objects
  // of the same dry run would otherwise find no namespace.
  await cp.adminApi.createNamespace({ body: { metadata: { name: 'kubelet-pods-fleet' } } }).catch(() => undefined);
  const out = await kubectl(cp.cluster.adminKubeconfig, 'apply', '-k', BASE, '--dry-run=server', '-o', 'name');
  const applied = out.trim().split('\n').sort();
  for (const kind of ['clusterrole.rbac.authorization.k8s.io/kubelet-pods-fleet', 'clusterrolebinding.rbac.authorization.k8s.io/kubelet-pods-fleet', 'deployment.apps/kubelet-pods-fleet', 'serviceaccount/kubelet-pods-fleet', 'flowschema.flowcontrol.apiserver.k8s.io/kubelet-pods-fleet-node-high']) {
    assert.ok(applied.includes(kind), `${kind} in ${applied.join(', ')}`);
  }
  assert.equal(applied.filter((a) => a.startsWith('configmap/')).length, 2);
  // The base's ClusterRole is the file the fleet's one-credential mode binds (no second copy).
  const rendered = parseAllDocuments(await kubectl(cp.cluster.adminKubeconfig, 'kustomize', BASE)).map((d) => d.toJS() as { kind: string; rules?: unknown });
  const role = parseAllDocuments(await readFile(FLEET_CLUSTER_ROLE_FILE, 'utf8'))[0]!.toJS() as { rules: unknown };
  assert.deepEqual(rendered.find((d) => d.kind === 'ClusterRole')?.rules, role.rules);
  const config = resolveFleetConfig((await import('yaml')).parse(await readFile(`${BASE}/fleet.yaml`, 'utf8')), {});
  assert.equal(config.nodes.length, 100);
});

/** GET `path` as the kubeconfig's user; returns the status and API Priority and Fairness's verdict. */
async function classify(kubeconfigFile: string, path: string): Promise<{ status: number; flowSchema: string; priorityLevel: string }> {
  const access = createClusterAccess(readKubeConfigFile(kubeconfigFile));
  const { agent, headers } = await access.prepare();
  return new Promise((resolve, reject) => {
    const req = request(new URL(`${access.basePath}${path}`, access.server), { agent, headers }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          flowSchema: String(res.headers['x-kubernetes-pf-flowschema-uid']),
          priorityLevel: String(res.headers['x-kubernetes-pf-prioritylevel-uid']),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

it("the fleet's Lease and Node requests go to the kubelet's priority level, its pod requests do not", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-priority-'));
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  // Run again: the schema is replaced, not refused.
  await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const flowControl = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(FlowcontrolApiserverV1Api);
  const schema = await flowControl.readFlowSchema({ name: 'kubelet-pods-fleet-node-high' });
  const nodeHigh = await flowControl.readPriorityLevelConfiguration({ name: 'node-high' });
  const workloadLow = await flowControl.readPriorityLevelConfiguration({ name: 'workload-low' });
  for (const path of ['/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fleet-priority-0', '/api/v1/nodes/fleet-priority-0']) {
    const seen = await classify(kubeconfig, path);
    assert.equal(seen.status, 404, path);
    assert.equal(seen.flowSchema, schema.metadata!.uid, path);
    assert.equal(seen.priorityLevel, nodeHigh.metadata!.uid, path);
  }
  const pods = await classify(kubeconfig, '/api/v1/pods?limit=1');
  assert.equal(pods.status, 200);
  assert.notEqual(pods.flowSchema, schema.metadata!.uid);
  assert.equal(pods.priorityLevel, workloadLow.metadata!.uid);
});
