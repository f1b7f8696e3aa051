/**
 * How long one typed API call may take before it is abandoned. Without a limit a request on a
 * connection that died silently (a half-open socket after a network partition or a load
 * balancer restart) never settles, and the loop awaiting it (a Lease renewal, the mirror queue)
 * stalls for good. An abandoned call fails like any transport error and its loop retries.
 * The transport (src/kube/api-transport.ts) starts the deadline once the rate limiter let the
 * call through, and clears it once the answer's body has been read.
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

/** The limit for one request, from its API path (without the server's prefix or the query). */
export function timeoutForPath(path: string, timeouts: RequestTimeouts): number {
  return HEARTBEAT_PATH.test(path) ? timeouts.heartbeatMs : timeouts.otherMs;
}

/** The limit for one request, from its URL. */
export function timeoutFor(url: string, timeouts: RequestTimeouts): number {
  return timeoutForPath(new URL(url).pathname, timeouts);
}

/** True for the error a call fails with when its deadline passed (or its caller aborted it). */
export function isAbortError(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
