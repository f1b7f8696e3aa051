import type { RequestContext } from '@kubernetes/client-node';

/**
 * How long one typed API call may take before it is abandoned. Without a limit a request on a
 * connection that died silently (a half-open socket after a network partition or a load
 * balancer restart) never settles, and the loop awaiting it (a Lease renewal, the mirror queue)
 * stalls for good. An abandoned call fails like any transport error and its loop retries.
 */
export interface RequestTimeouts {
  /**
   * Node heartbeats (the node's Lease, its Node and Node status). The kubelet gives its
   * heartbeat client the shorter of `nodeStatusUpdateFrequency` and the Lease duration, so that
   * a stuck renewal is retried well before the Lease runs out. 10 s by default.
   */
  heartbeatMs: number;
  /** Everything else: mirror writes, status patches, lists, reviews. 60 s by default. */
  otherMs: number;
}

export const DEFAULT_REQUEST_TIMEOUTS: RequestTimeouts = { heartbeatMs: 10_000, otherMs: 60_000 };

const HEARTBEAT_PATH = /^\/(?:apis\/coordination\.k8s\.io\/v1\/namespaces\/kube-node-lease\/leases(?:\/[^/]+)?|api\/v1\/nodes(?:\/[^/]+(?:\/status)?)?)$/;

/** The limit for one request, from its path. */
export function timeoutFor(url: string, timeouts: RequestTimeouts): number {
  return HEARTBEAT_PATH.test(new URL(url).pathname) ? timeouts.heartbeatMs : timeouts.otherMs;
}

/**
 * Arms the request's deadline. Called after the rate limiter let it through, so that time spent
 * waiting for a token is not counted. A caller's own signal is left alone.
 */
export function armRequestTimeout(context: RequestContext, timeouts: RequestTimeouts): void {
  if (context.getSignal() !== undefined) return;
  context.setSignal(AbortSignal.timeout(timeoutFor(context.getUrl(), timeouts)));
}

/** True for the error a call fails with when its deadline passed (or its caller aborted it). */
export function isAbortError(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
