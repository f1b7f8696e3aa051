// One real control plane (kube-apiserver + etcd, scheduler, controller manager) per test
// file, and a fresh namespace per test. Call useControlPlane() at the top level of a test
// file: it registers the node:test hooks that start the cluster before the first test and
// stop it after the last.

import { randomBytes } from 'node:crypto';
import { after, before, beforeEach } from 'node:test';

import { CoreV1Api, KubeConfig, type V1Node, type V1Pod } from '@kubernetes/client-node';

import { startLocalCluster, type LocalCluster } from '../../src/cluster/local-cluster.js';
import { waitFor } from './wait.js';

/** A KubeConfig read from a kubeconfig file (e.g. one the control plane wrote). */
export function kubeConfigFromFile(path: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export function coreApiFromFile(path: string): CoreV1Api {
  return kubeConfigFromFile(path).makeApiClient(CoreV1Api);
}

/**
 * Creates the Node object `name` authenticated as that node (NodeRestriction lets a node
 * create its own Node, and only that one) and returns it, with its UID.
 */
export async function registerNode(nodeApi: CoreV1Api, name: string): Promise<V1Node> {
  return nodeApi.createNode({ body: { apiVersion: 'v1', kind: 'Node', metadata: { name } } });
}

/**
 * Waits for the `default` ServiceAccount of `namespace`, which kube-controller-manager creates
 * shortly after the namespace; ServiceAccount admission refuses ordinary pods until then.
 */
export async function waitForDefaultServiceAccount(api: CoreV1Api, namespace: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    () => api.readNamespacedServiceAccount({ namespace, name: 'default' }).then(
      () => true,
      (err: unknown) => {
        if ((err as { code?: number }).code === 404) return false;
        throw err;
      },
    ),
    `the default ServiceAccount of namespace ${namespace}`,
    { timeoutMs, intervalMs: 50 },
  );
}

export interface ControlPlaneFixture {
  /** The running cluster (from the `before` hook on). */
  readonly cluster: LocalCluster;
  /** CoreV1Api as an admin (system:masters). */
  readonly adminApi: CoreV1Api;
  /** The namespace created for the current test. */
  readonly namespace: string;
  kubeConfig(node: string): KubeConfig;
  /** CoreV1Api authenticated as `system:node:<node>`. */
  nodeApi(node: string): CoreV1Api;
  /**
   * Creates a namespace and returns its name once it has its `default` ServiceAccount (when
   * the controller manager runs; without it the namespace has none).
   */
  createNamespace(prefix?: string): Promise<string>;
}

export interface UseControlPlaneOptions {
  nodes: readonly string[];
  /** Register these nodes' Node objects (as the nodes themselves) in `before`. */
  registerNodes?: boolean;
  /** Passed to startLocalCluster (e.g. `5s` to reach 410 Gone quickly). */
  etcdCompactionInterval?: string;
  /** Passed to startLocalCluster: the API server writes an audit log (see test/helpers/audit-log.ts). */
  auditPolicyFile?: string;
  /** Passed to startLocalCluster: false leaves kube-scheduler out. */
  scheduler?: boolean;
  /** Passed to startLocalCluster: false leaves kube-controller-manager out. */
  controllerManager?: boolean;
}

export function useControlPlane(options: UseControlPlaneOptions): ControlPlaneFixture {
  let cluster: LocalCluster | undefined;
  let adminApi: CoreV1Api | undefined;
  let namespace: string | undefined;
  const kubeConfigs = new Map<string, KubeConfig>();

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is only available once the control plane has started (in before)`);
    return value;
  };

  const fixture: ControlPlaneFixture = {
    get cluster() {
      return need(cluster, 'cluster');
    },
    get adminApi() {
      return need(adminApi, 'adminApi');
    },
    get namespace() {
      return need(namespace, 'namespace');
    },
    kubeConfig(node) {
      let kc = kubeConfigs.get(node);
      if (kc === undefined) {
        const path = need(cluster, 'cluster').nodeKubeconfigs[node];
        if (path === undefined) throw new Error(`no credentials for node ${JSON.stringify(node)}; add it to useControlPlane({ nodes })`);
        kc = kubeConfigFromFile(path);
        kubeConfigs.set(node, kc);
      }
      return kc;
    },
    nodeApi(node) {
      return fixture.kubeConfig(node).makeApiClient(CoreV1Api);
    },
    async createNamespace(prefix = 'test') {
      const api = need(adminApi, 'adminApi');
      const name = `${prefix}-${randomBytes(4).toString('hex')}`;
      await api.createNamespace({ body: { metadata: { name } } });
      if (need(cluster, 'cluster').components.includes('kube-controller-manager')) await waitForDefaultServiceAccount(api, name);
      return name;
    },
  };

  before(async () => {
    cluster = await startLocalCluster({
      nodes: options.nodes,
      ...(options.etcdCompactionInterval !== undefined ? { etcdCompactionInterval: options.etcdCompactionInterval } : {}),
      ...(options.auditPolicyFile !== undefined ? { auditPolicyFile: options.auditPolicyFile } : {}),
      ...(options.scheduler !== undefined ? { scheduler: options.scheduler } : {}),
      ...(options.controllerManager !== undefined ? { controllerManager: options.controllerManager } : {}),
    });
    adminApi = coreApiFromFile(cluster.adminKubeconfig);
    if (options.registerNodes === true) {
      for (const node of options.nodes) await registerNode(fixture.nodeApi(node), node);
    }
  });

  beforeEach(async () => {
    namespace = await fixture.createNamespace();
  });

  after(async () => {
    await cluster?.dispose();
  });

  return fixture;
}

/** A pod as `api` reads it, or undefined when the API server answers 404. */
export async function readPodIfExists(api: CoreV1Api, namespace: string, name: string): Promise<V1Pod | undefined> {
  try {
    return await api.readNamespacedPod({ namespace, name });
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}
