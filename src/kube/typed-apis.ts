import type {
  CoreV1Event,
  V1Lease,
  V1Node,
  V1NodeList,
  V1Pod,
  V1PodList,
  V1SubjectAccessReview,
  V1TokenReview,
} from '@kubernetes/client-node';
import type { ApiRequest, ApiTransport } from './api-transport.js';
import { headersOf, PatchStrategy, type RequestOptions } from './request-options.js';

/**
 * The API calls the agent makes, and only those, with the names and parameter objects of
 * client-node 1.x's `CoreV1Api`, `CoordinationV1Api`, `AuthenticationV1Api` and
 * `AuthorizationV1Api` (so that a client-node client also fits each interface, and callers
 * changed only their import lines). The answers are the API server's JSON as it is: timestamps
 * stay strings (client-node turned some into Dates; what reads them takes either), and nothing
 * walks a type map. Failures are `ApiException`s (src/kube/api-exception.ts).
 */

/** Write parameters every call of this kind accepts. */
interface WriteParams {
  pretty?: string;
  dryRun?: string;
  fieldManager?: string;
  fieldValidation?: string;
}

/** List parameters (`_continue` is sent as `continue`, as client-node does). */
export interface ListParams {
  allowWatchBookmarks?: boolean;
  _continue?: string;
  fieldSelector?: string;
  labelSelector?: string;
  limit?: number;
  pretty?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

export interface DeleteOptionsBody {
  apiVersion?: string;
  kind?: string;
  dryRun?: string[];
  gracePeriodSeconds?: number;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
  orphanDependents?: boolean;
  preconditions?: { resourceVersion?: string; uid?: string };
  propagationPolicy?: string;
}

export interface CoreV1Api {
  createNamespacedPod(param: { namespace: string; body: V1Pod } & WriteParams, options?: RequestOptions): Promise<V1Pod>;
  readNamespacedPod(param: { name: string; namespace: string; pretty?: string }, options?: RequestOptions): Promise<V1Pod>;
  deleteNamespacedPod(
    param: {
      name: string;
      namespace: string;
      pretty?: string;
      dryRun?: string;
      gracePeriodSeconds?: number;
      ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
      orphanDependents?: boolean;
      propagationPolicy?: string;
      body?: DeleteOptionsBody;
    },
    options?: RequestOptions,
  ): Promise<V1Pod>;
  patchNamespacedPodStatus(param: { name: string; namespace: string; body: any; force?: boolean } & WriteParams, options?: RequestOptions): Promise<V1Pod>;
  listPodForAllNamespaces(param?: ListParams, options?: RequestOptions): Promise<V1PodList>;
  readNode(param: { name: string; pretty?: string }, options?: RequestOptions): Promise<V1Node>;
  createNode(param: { body: V1Node } & WriteParams, options?: RequestOptions): Promise<V1Node>;
  patchNodeStatus(param: { name: string; body: any; force?: boolean } & WriteParams, options?: RequestOptions): Promise<V1Node>;
  listNode(param?: ListParams, options?: RequestOptions): Promise<V1NodeList>;
  createNamespacedEvent(param: { namespace: string; body: CoreV1Event } & WriteParams, options?: RequestOptions): Promise<CoreV1Event>;
  patchNamespacedEvent(param: { name: string; namespace: string; body: any; force?: boolean } & WriteParams, options?: RequestOptions): Promise<CoreV1Event>;
}

export interface CoordinationV1Api {
  readNamespacedLease(param: { name: string; namespace: string; pretty?: string }, options?: RequestOptions): Promise<V1Lease>;
  createNamespacedLease(param: { namespace: string; body: V1Lease } & WriteParams, options?: RequestOptions): Promise<V1Lease>;
  replaceNamespacedLease(param: { name: string; namespace: string; body: V1Lease } & WriteParams, options?: RequestOptions): Promise<V1Lease>;
}

export interface AuthenticationV1Api {
  createTokenReview(param: { body: V1TokenReview } & WriteParams, options?: RequestOptions): Promise<V1TokenReview>;
}

export interface AuthorizationV1Api {
  createSubjectAccessReview(param: { body: V1SubjectAccessReview } & WriteParams, options?: RequestOptions): Promise<V1SubjectAccessReview>;
}

const seg = (value: string): string => encodeURIComponent(value);

/** The query of a write: the optional parameters client-node sends as such. */
function writeQuery(p: WriteParams & { force?: boolean }): ApiRequest['query'] {
  return { pretty: p.pretty, dryRun: p.dryRun, fieldManager: p.fieldManager, fieldValidation: p.fieldValidation, force: p.force };
}

function listQuery(p: ListParams = {}): ApiRequest['query'] {
  return {
    allowWatchBookmarks: p.allowWatchBookmarks,
    continue: p._continue,
    fieldSelector: p.fieldSelector,
    labelSelector: p.labelSelector,
    limit: p.limit,
    pretty: p.pretty,
    resourceVersion: p.resourceVersion,
    resourceVersionMatch: p.resourceVersionMatch,
    sendInitialEvents: p.sendInitialEvents,
    timeoutSeconds: p.timeoutSeconds,
  };
}

/** A call with the options' headers; a PATCH without a Content-Type gets client-node's default, a JSON patch. */
function call<T>(t: ApiTransport, request: ApiRequest, options: RequestOptions | undefined): Promise<T> {
  const headers = headersOf(options);
  const contentType = request.method === 'PATCH' ? PatchStrategy.JsonPatch : request.contentType;
  const answerUse = options?.answerUse;
  return t.call<T>({ ...request, ...(contentType !== undefined ? { contentType } : {}), headers, ...(answerUse !== undefined ? { answerUse } : {}) });
}

const POD_PATH = (namespace: string, name?: string): string => `/api/v1/namespaces/${seg(namespace)}/pods${name === undefined ? '' : `/${seg(name)}`}`;
const NODE_PATH = (name?: string): string => `/api/v1/nodes${name === undefined ? '' : `/${seg(name)}`}`;
const EVENT_PATH = (namespace: string, name?: string): string => `/api/v1/namespaces/${seg(namespace)}/events${name === undefined ? '' : `/${seg(name)}`}`;
const LEASE_PATH = (namespace: string, name?: string): string =>
  `/apis/coordination.k8s.io/v1/namespaces/${seg(namespace)}/leases${name === undefined ? '' : `/${seg(name)}`}`;

export function createCoreV1Api(t: ApiTransport): CoreV1Api {
  return {
    createNamespacedPod: (p, o) => call(t, { method: 'POST', path: POD_PATH(p.namespace), query: writeQuery(p), body: p.body }, o),
    readNamespacedPod: (p, o) => call(t, { method: 'GET', path: POD_PATH(p.namespace, p.name), query: { pretty: p.pretty } }, o),
    deleteNamespacedPod: (p, o) =>
      call(
        t,
        {
          method: 'DELETE',
          path: POD_PATH(p.namespace, p.name),
          query: {
            pretty: p.pretty,
            dryRun: p.dryRun,
            gracePeriodSeconds: p.gracePeriodSeconds,
            ignoreStoreReadErrorWithClusterBreakingPotential: p.ignoreStoreReadErrorWithClusterBreakingPotential,
            orphanDependents: p.orphanDependents,
            propagationPolicy: p.propagationPolicy,
          },
          body: p.body,
        },
        o,
      ),
    patchNamespacedPodStatus: (p, o) => call(t, { method: 'PATCH', path: `${POD_PATH(p.namespace, p.name)}/status`, query: writeQuery(p), body: p.body }, o),
    listPodForAllNamespaces: (p, o) => call(t, { method: 'GET', path: '/api/v1/pods', query: listQuery(p) }, o),
    readNode: (p, o) => call(t, { method: 'GET', path: NODE_PATH(p.name), query: { pretty: p.pretty } }, o),
    createNode: (p, o) => call(t, { method: 'POST', path: NODE_PATH(), query: writeQuery(p), body: p.body }, o),
    patchNodeStatus: (p, o) => call(t, { method: 'PATCH', path: `${NODE_PATH(p.name)}/status`, query: writeQuery(p), body: p.body }, o),
    listNode: (p, o) => call(t, { method: 'GET', path: NODE_PATH(), query: listQuery(p) }, o),
    createNamespacedEvent: (p, o) => call(t, { method: 'POST', path: EVENT_PATH(p.namespace), query: writeQuery(p), body: p.body }, o),
    patchNamespacedEvent: (p, o) => call(t, { method: 'PATCH', path: EVENT_PATH(p.namespace, p.name), query: writeQuery(p), body: p.body }, o),
  };
}

export function createCoordinationV1Api(t: ApiTransport): CoordinationV1Api {
  return {
    readNamespacedLease: (p, o) => call(t, { method: 'GET', path: LEASE_PATH(p.namespace, p.name), query: { pretty: p.pretty } }, o),
    createNamespacedLease: (p, o) => call(t, { method: 'POST', path: LEASE_PATH(p.namespace), query: writeQuery(p), body: p.body }, o),
    replaceNamespacedLease: (p, o) => call(t, { method: 'PUT', path: LEASE_PATH(p.namespace, p.name), query: writeQuery(p), body: p.body }, o),
  };
}

export function createAuthenticationV1Api(t: ApiTransport): AuthenticationV1Api {
  return {
    createTokenReview: (p, o) => call(t, { method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', query: writeQuery(p), body: p.body }, o),
  };
}

export function createAuthorizationV1Api(t: ApiTransport): AuthorizationV1Api {
  return {
    createSubjectAccessReview: (p, o) => call(t, { method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', query: writeQuery(p), body: p.body }, o),
  };
}
