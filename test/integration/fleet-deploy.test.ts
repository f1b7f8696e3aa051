// deploy/fleet/, the kustomize base of `kubelet-pods fleet` (docs/fleet.md, "On Kubernetes"):
// valid for a real API server (a server-side dry run with the real kubectl), and its ClusterRole
// is the one the fleet tests run with (test/integration/fleet.test.ts, via issueFleetToken).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { FLEET_CLUSTER_ROLE_FILE } from '../../src/fleet/fleet-identity.js';
import { resolveFleetConfig } from '../../src/fleet/fleet-config.js';
import { useControlPlane } from '../helpers/control-plane.js';
import { kubectl } from '../helpers/kubectl.js';

const BASE = fileURLToPath(new URL('../../../deploy/fleet', import.meta.url));
const cp = useControlPlane({ nodes: ['fleet-deploy-unused'] });

it('deploy/fleet passes a server-side dry run on the real API server, and its fleet file is valid', async () => {
  // The namespace exists for real first: a dry run creates nothing, so the namespaced objects
  // of the same dry run would otherwise find no namespace.
  await cp.adminApi.createNamespace({ body: { metadata: { name: 'kubelet-pods-fleet' } } }).catch(() => undefined);
  const out = await kubectl(cp.cluster.adminKubeconfig, 'apply', '-k', BASE, '--dry-run=server', '-o', 'name');
  const applied = out.trim().split('\n').sort();
  for (const kind of ['clusterrole.rbac.authorization.k8s.io/kubelet-pods-fleet', 'clusterrolebinding.rbac.authorization.k8s.io/kubelet-pods-fleet', 'deployment.apps/kubelet-pods-fleet', 'serviceaccount/kubelet-pods-fleet']) {
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
