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

const NODE_LEASE_PATH = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/kube-node-lease\/leases(?:\/[^/]+)?$/;
const NODE_PATH = /^\/api\/v1\/nodes(?:\/[^/]+(?:\/status)?)?$/;
const NODE_LIST_PATH = '/api/v1/nodes';

/** Which of the node's own API paths a call is on: a node Lease, a Node (the list, one Node, its status), or neither. */
export type NodeScope = 'lease' | 'node' | undefined;

/** The call's NodeScope, worked out once per call: both its deadline and `isHeartbeat` depend on it. */
export function nodeScopeOf(path: string): NodeScope {
  if (NODE_LEASE_PATH.test(path)) return 'lease';
  return NODE_PATH.test(path) ? 'node' : undefined;
}

/**
 * The node's heartbeats, which skip the token bucket: the kubelet sends them through a client
 * of their own without client-side throttling (`HeartbeatClient`, QPS -1), its node Lease
 * (every call) and its Node status update (the read of its Node and the status write), so that a
 * burst of pod writes never holds a renewal back. Registration (creating the Node) and the Node
 * list are not heartbeats, though they share the heartbeats' short deadline.
 */
export function isHeartbeat(method: string, path: string, scope: NodeScope = nodeScopeOf(path)): boolean {
  if (scope !== 'node') return scope === 'lease';
  if (path === NODE_LIST_PATH) return false;
  return path.endsWith('/status') ? method === 'GET' || method === 'PATCH' || method === 'PUT' : method === 'GET';
}

/** The limit for one request, from its API path (without the server's prefix or the query). */
export function timeoutForPath(path: string, timeouts: RequestTimeouts, scope: NodeScope = nodeScopeOf(path)): number {
  return scope !== undefined ? timeouts.heartbeatMs : timeouts.otherMs;
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
