import type { ConnectionPool, LeaseApi } from './api-clients.js';
import { createApiTransport } from './api-transport.js';
import { createClusterAccess } from './cluster-access.js';
import type { KubeConfigLike } from './kubeconfig.js';
import type { RateLimiter } from './rate-limiter.js';
import { DEFAULT_REQUEST_TIMEOUTS } from './request-timeout.js';
import { createCoordinationV1Api } from './typed-apis.js';

export interface LeaseClientOptions {
  /** Where the keep-alive agent comes from; the fleet passes a pool of the Lease client's own. */
  pool?: ConnectionPool;
  /**
   * How long one call may take, Retry-After waits included, before it fails as an abort; the
   * heartbeat deadline of the typed clients (src/kube/request-timeout.ts), 10 s by default.
   */
  timeoutMs?: number;
  /** The User-Agent, as `ApiClientsOptions.userAgent`; none by default. */
  userAgent?: string;
  /** The current user's token file, read again each minute, as `ApiClientsOptions.tokenFile`. */
  tokenFile?: string;
  /** Waits out a Retry-After; a test passes a fake. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * The Lease client of the fleet: the Lease calls of the typed clients (src/kube/typed-apis.ts,
 * one plain JSON request per call, the same rate limiter, credentials, deadline, client-go's
 * retries after a 429 or 5xx with Retry-After, and the same `ApiException`s), with one
 * deadline for all three calls and no User-Agent unless given. What it returns is the parsed
 * JSON: timestamps stay strings, which the lease logic accepts (it reads them with `new Date`).
 *
 * Returns undefined when the kubeconfig needs what only client-node does: credentials that may
 * change while we run (exec plugin, auth provider), a proxy, or a plain-http server.
 */
export function createLeaseClient(kubeConfig: KubeConfigLike, limiter: RateLimiter, options: LeaseClientOptions = {}): LeaseApi | undefined {
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null || !cluster.server.startsWith('https:')) return undefined;
  const access = createClusterAccess(kubeConfig, {
    ...(options.pool !== undefined ? { pool: options.pool } : {}),
    ...(options.tokenFile !== undefined ? { tokenFile: options.tokenFile } : {}),
  });
  if (access.kind !== 'static') return undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUTS.heartbeatMs;
  const transport = createApiTransport(access, {
    limiter,
    timeouts: { heartbeatMs: timeoutMs, otherMs: timeoutMs },
    userAgent: options.userAgent ?? '',
    ...(options.sleep !== undefined ? { sleep: options.sleep } : {}),
  });
  const { readNamespacedLease, createNamespacedLease, replaceNamespacedLease } = createCoordinationV1Api(transport);
  return { readNamespacedLease, createNamespacedLease, replaceNamespacedLease };
}
