import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

/** deploy/fleet/cluster-role.yaml: the ClusterRole the fleet's one credential is bound to. */
// From dist/fleet/ (the package) or build/src/fleet/ (the tests).
export const FLEET_CLUSTER_ROLE_FILE = ['../../deploy/fleet/cluster-role.yaml', '../../../deploy/fleet/cluster-role.yaml']
  .map((p) => fileURLToPath(new URL(p, import.meta.url)))
  .find((p) => existsSync(p)) ?? fileURLToPath(new URL('../../deploy/fleet/cluster-role.yaml', import.meta.url));

export async function readFleetClusterRole(): Promise<V1ClusterRole> {
  return parseYaml(await readFile(FLEET_CLUSTER_ROLE_FILE, 'utf8')) as V1ClusterRole;
}

export interface FleetTokenOptions {
  /** An admin's kubeconfig: it creates the role, the ServiceAccount and the binding. */
  adminKubeconfig: string;
  /** Where the fleet's kubeconfig is written (mode 0600). */
  out: string;
  namespace?: string;
  serviceAccount?: string;
  /** The role to bind; the shipped one by default (tests remove rules from it). */
  role?: V1ClusterRole;
  expirationSeconds?: number;
}

/**
 * Sets up the fleet's one identity: the shipped ClusterRole, a ServiceAccount bound to it, and
 * a kubeconfig with a token of that ServiceAccount (TokenRequest). Existing objects are
 * replaced, so it can be run again.
 */
export async function issueFleetToken(options: FleetTokenOptions): Promise<string> {
  const admin = new KubeConfig();
  admin.loadFromFile(options.adminKubeconfig);
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  const namespace = options.namespace ?? 'kubelet-pods-fleet';
  const name = options.serviceAccount ?? 'kubelet-pods-fleet';
  const role = options.role ?? (await readFleetClusterRole());
  const roleName = role.metadata?.name ?? 'kubelet-pods-fleet';
  const ignoreExists = (err: unknown): void => {
    if ((err as { code?: number }).code !== 409) throw err;
  };
  await core.createNamespace({ body: { metadata: { name: namespace } } }).catch(ignoreExists);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }).catch(ignoreExists);
  try {
    await rbac.createClusterRole({ body: role });
  } catch (err) {
    ignoreExists(err);
    const current = await rbac.readClusterRole({ name: roleName });
    await rbac.replaceClusterRole({ name: roleName, body: { ...role, metadata: { ...role.metadata, resourceVersion: current.metadata?.resourceVersion } } });
  }
  await rbac
    .createClusterRoleBinding({
      body: {
        metadata: { name: roleName },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
        subjects: [{ kind: 'ServiceAccount', name, namespace }],
      },
    })
    .catch(ignoreExists);
  const request = await core.createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: options.expirationSeconds ?? 24 * 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error('the TokenRequest returned no token');
  const cluster = admin.getCurrentCluster()!;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'local', cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData ?? Buffer.from(await readFile(cluster.caFile!)).toString('base64') } }],
    users: [{ name: `system:serviceaccount:${namespace}:${name}`, user: { token } }],
    contexts: [{ name: 'local', context: { cluster: 'local', user: `system:serviceaccount:${namespace}:${name}` } }],
    'current-context': 'local',
  };
  await writeFile(options.out, JSON.stringify(kubeconfig, null, 2), { mode: 0o600 });
  return options.out;
}
