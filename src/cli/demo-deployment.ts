// The demo's ordinary workload: a Deployment (examples/deployment.yaml, shipped in the package
// and embedded in the single executable with the rest of examples/) that kube-scheduler places
// on the demo's node(s) beside the static pods, counting their mirror pods' requests as taken.

import { readFile } from 'node:fs/promises';
import { AppsV1Api, CoreV1Api, type KubeConfig, type V1Deployment } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { apiStatusOf, isAlreadyExists, isNotFound } from '../kube/api-error.js';

/** The file in the examples directory. */
export const DEMO_DEPLOYMENT_FILE = 'deployment.yaml';

/** Reads a Deployment manifest (apps/v1, one document); its namespace defaults to `default`. */
export async function loadDemoDeployment(file: string): Promise<V1Deployment> {
  const text = await readFile(file, 'utf8');
  return parseDemoDeployment(text, file);
}

export function parseDemoDeployment(text: string, file: string): V1Deployment {
  const d = parseYaml(text) as V1Deployment | null;
  const problem =
    d === null || typeof d !== 'object' ? 'not an object' :
    d.apiVersion !== 'apps/v1' || d.kind !== 'Deployment' ? `an apps/v1 Deployment is expected, got ${d.apiVersion}/${d.kind}` :
    !d.metadata?.name ? 'metadata.name is missing' :
    d.spec?.selector === undefined ? 'spec.selector is missing' :
    undefined;
  if (problem !== undefined) throw new Error(`the demo's Deployment ${file}: ${problem}`);
  return { ...d!, metadata: { ...d!.metadata, namespace: d!.metadata?.namespace ?? 'default' } };
}

/** Where the Deployment's creation stands, for the view. */
export type DeploymentState = { state: 'waiting' | 'created' } | { state: 'failed'; message: string };

export function describeDeploymentState(s: DeploymentState): string | undefined {
  if (s.state === 'waiting') return 'creating it (once its namespace has its default ServiceAccount)';
  if (s.state === 'failed') return `could not create it: ${s.message}`;
  return undefined;
}

/**
 * Creates the Deployment as admin, once its namespace exists (created if need be) and has the
 * `default` ServiceAccount that kube-controller-manager gives it (without it every pod the
 * ReplicaSet controller creates is refused, and it retries with growing pauses). One already
 * there is left as it is. Rejects when the API server refuses it, or when `signal` aborts.
 */
export async function createDemoDeployment(kubeConfig: KubeConfig, deployment: V1Deployment, signal?: AbortSignal): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const namespace = deployment.metadata!.namespace!;
  try {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
  } catch (err) {
    if (!isAlreadyExists(err)) throw new Error(`namespace ${namespace}: ${apiStatusOf(err).message}`, { cause: err });
  }
  for (;;) {
    signal?.throwIfAborted();
    const found = await core.readNamespacedServiceAccount({ namespace, name: 'default' }).then(
      () => true,
      (err: unknown) => (isNotFound(err) ? false : Promise.reject(new Error(`the default ServiceAccount of ${namespace}: ${apiStatusOf(err).message}`, { cause: err }))),
    );
    if (found) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  signal?.throwIfAborted();
  try {
    await apps.createNamespacedDeployment({ namespace, body: deployment });
  } catch (err) {
    if (!isAlreadyExists(err)) throw new Error(apiStatusOf(err).message, { cause: err });
  }
}

/**
 * Starts creating the Deployment in the background and keeps its state for the view; `done`
 * settles with the outcome (it never rejects: a failure is a state).
 */
export function startDemoDeployment(kubeConfig: KubeConfig, deployment: V1Deployment): { state(): DeploymentState; done: Promise<DeploymentState>; stop(): void } {
  let state: DeploymentState = { state: 'waiting' };
  const abort = new AbortController();
  const done = createDemoDeployment(kubeConfig, deployment, abort.signal).then(
    () => (state = { state: 'created' }),
    (err: unknown) => (state = { state: 'failed', message: err instanceof Error ? err.message : String(err) }),
  );
  return { state: () => state, done, stop: () => abort.abort() };
}
