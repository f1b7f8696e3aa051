import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, FlowcontrolApiserverV1Api, KubeConfig, RbacAuthorizationV1Api, type V1ClusterRole, type V1FlowSchema } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';

/** A file of deploy/fleet/, from dist/fleet/ (the package) or build/src/fleet/ (the tests). */
function deployFile(name: string): string {
  const candidates = [`../../deploy/fleet/${name}`, `../../../deploy/fleet/${name}`].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

/** deploy/fleet/cluster-role.yaml: the ClusterRole the fleet's one credential is bound to. */
export const FLEET_CLUSTER_ROLE_FILE = deployFile('cluster-role.yaml');
/** deploy/fleet/flow-schema.yaml: the fleet's Lease and Node writes in the kubelet's priority level. */
export const FLEET_FLOW_SCHEMA_FILE = deployFile('flow-schema.yaml');

export async function readFleetClusterRole(): Promise<V1ClusterRole> {
  return parseYaml(await readFile(FLEET_CLUSTER_ROLE_FILE, 'utf8')) as V1ClusterRole;
}

/**
 * The shipped FlowSchema for the given ServiceAccount: named after it (the shipped name for the
 * shipped ServiceAccount), so that two fleets' identities do not take each other's schema.
 */
export async function readFleetFlowSchema(namespace: string, serviceAccount: string): Promise<V1FlowSchema> {
  const schema = parseYaml(await readFile(FLEET_FLOW_SCHEMA_FILE, 'utf8')) as V1FlowSchema;
  schema.metadata = { ...schema.metadata, name: `${serviceAccount}-node-high` };
  for (const rule of schema.spec?.rules ?? []) {
    rule.subjects = [{ kind: 'ServiceAccount', serviceAccount: { name: serviceAccount, namespace } }];
  }
  return schema;
}

const isConflict = (err: unknown): boolean => (err as { code?: number }).code === 409;

/** Creates a cluster-scoped object, or replaces the one of that name. */
async function createOrReplace<T extends { metadata?: { name?: string; resourceVersion?: string } }>(
  body: T,
  api: { create(body: T): Promise<unknown>; read(name: string): Promise<T>; replace(name: string, body: T): Promise<unknown> },
): Promise<void> {
  try {
    await api.create(body);
  } catch (err) {
    if (!isConflict(err)) throw err;
    const name = body.metadata!.name!;
    const current = await api.read(name);
    await api.replace(name, { ...body, metadata: { ...body.metadata, resourceVersion: current.metadata?.resourceVersion } });
  }
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
 * Sets up the fleet's one identity: the shipped ClusterRole, a ServiceAccount bound to it, the
 * shipped FlowSchema for it, and a kubeconfig with a token of that ServiceAccount (TokenRequest).
 * Existing objects are replaced, so it can be run again.
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
  const flowControl = admin.makeApiClient(FlowcontrolApiserverV1Api);
  const ignoreExists = (err: unknown): void => {
    if (!isConflict(err)) throw err;
  };
  await core.createNamespace({ body: { metadata: { name: namespace } } }).catch(ignoreExists);
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } }).catch(ignoreExists);
  await createOrReplace(role, {
    create: (body) => rbac.createClusterRole({ body }),
    read: (n) => rbac.readClusterRole({ name: n }),
    replace: (n, body) => rbac.replaceClusterRole({ name: n, body }),
  });
  await createOrReplace(await readFleetFlowSchema(namespace, name), {
    create: (body) => flowControl.createFlowSchema({ body }),
    read: (n) => flowControl.readFlowSchema({ name: n }),
    replace: (n, body) => flowControl.replaceFlowSchema({ name: n, body }),
  });
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
