import { createApiTransport } from './api-transport.js';
import { createClusterAccess } from './cluster-access.js';
import type { ConnectionPool } from './connection-pool.js';
import type { KubeConfigLike } from './kubeconfig.js';
import type { RateLimiter } from './rate-limiter.js';
import { DEFAULT_REQUEST_TIMEOUTS, type RequestTimeouts } from './request-timeout.js';
import {
  createAuthenticationV1Api,
  createAuthorizationV1Api,
  createCoordinationV1Api,
  createCoreV1Api,
  type AuthenticationV1Api,
  type AuthorizationV1Api,
  type CoordinationV1Api,
  type CoreV1Api,
} from './typed-apis.js';

export { createConnectionPool, type ConnectionPool } from './connection-pool.js';
export { priorityOf } from './api-transport.js';
export { isHeartbeat } from './request-timeout.js';

/**
 * The Lease calls the node lease makes: our `CoordinationV1Api` fits, and so does client-node's.
 * Here, with the other clients, so that kube/ needs nothing of node/.
 */
export type LeaseApi = Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>;

export interface ApiClients {
  kubeConfig: KubeConfigLike;
  core: CoreV1Api;
  coordination: CoordinationV1Api;
  /**
   * For Events only: the same connection pool, but its own token bucket (`eventRecordQPS` /
   * `eventBurst`), as the kubelet gives its event client a separate rate limit, so that a burst
   * of events never delays a mirror pod and the reverse. The main limiter when none was given.
   */
  events: CoreV1Api;
  /** TokenReviews and SubjectAccessReviews for the kubelet port. */
  authentication: AuthenticationV1Api;
  authorization: AuthorizationV1Api;
}

export interface ApiClientsOptions {
  /** The event client's own limiter (see `ApiClients.events`). */
  eventLimiter?: RateLimiter;
  /**
   * Where the keep-alive connection agent comes from: many clients of one process (the
   * fleet's nodes, each with its own credentials) share one pool. Each client makes its own
   * by default.
   */
  pool?: ConnectionPool;
  /** The current user's token file, read again each minute; a `KubeConfigFile`'s own by default. */
  tokenFile?: string;
  /** Deadlines of single calls (src/kube/request-timeout.ts); 10 s for heartbeats, 60 s otherwise. */
  timeouts?: RequestTimeouts;
  /**
   * The User-Agent of every request: it names the writer in the API server's audit log and
   * managedFields (the fleet's replicas give theirs). `DEFAULT_USER_AGENT` when absent.
   */
  userAgent?: string;
}

/**
 * The typed API clients the agent uses (src/kube/typed-apis.ts: the dozen calls it makes, over
 * src/kube/api-transport.ts), all behind one client-side rate limiter (the kubelet's
 * kubeAPIQPS/kubeAPIBurst apply to its whole client) and one keep-alive connection pool, with
 * the kubeconfig's credentials worked out once (src/kube/cluster-access.ts; exec plugins and
 * auth providers are asked per request, through client-node loaded only for them).
 *
 * Why not client-node's generated clients: loading them is most of the agent's memory with no
 * pods, and they open a connection per request (docs/performance.md).
 */
export function createApiClients(kubeConfig: KubeConfigLike, limiter: RateLimiter, options: ApiClientsOptions = {}): ApiClients {
  const access = createClusterAccess(kubeConfig, {
    ...(options.pool !== undefined ? { pool: options.pool } : {}),
    ...(options.tokenFile !== undefined ? { tokenFile: options.tokenFile } : {}),
  });
  const transportWith = (bucket: RateLimiter) =>
    createApiTransport(access, {
      limiter: bucket,
      timeouts: options.timeouts ?? DEFAULT_REQUEST_TIMEOUTS,
      ...(options.userAgent !== undefined ? { userAgent: options.userAgent } : {}),
    });
  const transport = transportWith(limiter);
  const core = createCoreV1Api(transport);
  return {
    kubeConfig,
    core,
    coordination: createCoordinationV1Api(transport),
    events: options.eventLimiter !== undefined ? createCoreV1Api(transportWith(options.eventLimiter)) : core,
    authentication: createAuthenticationV1Api(transport),
    authorization: createAuthorizationV1Api(transport),
  };
}
