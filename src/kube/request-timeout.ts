import { wrapHttpLibrary, type HttpLibrary, type RequestContext, type ResponseContext } from '@kubernetes/client-node';

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
 * Gives every request sent through `inner` its deadline. The HTTP library runs after the
 * middleware's rate limiter let the request through, so time spent waiting for a token is not
 * counted. The timer is cleared once the answer's body has been read: `AbortSignal.timeout`
 * cannot be cancelled, and its timer firing after every call (building an abort error each
 * time) cost the fleet measurable CPU at 1,000 nodes. A caller's own signal is left alone.
 */
export function withRequestDeadlines(inner: HttpLibrary, timeouts: RequestTimeouts): HttpLibrary {
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      if (request.getSignal() !== undefined) return inner.send(request).toPromise();
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), timeoutFor(request.getUrl(), timeouts));
      request.setSignal(controller.signal);
      let response: ResponseContext;
      try {
        response = await inner.send(request).toPromise();
      } catch (err) {
        clearTimeout(timer);
        throw err;
      }
      // The body is read after this returns, and may stall too: the deadline covers it.
      const { text, binary } = response.body;
      const done = <T>(read: Promise<T>): Promise<T> => read.finally(() => clearTimeout(timer));
      response.body = { text: () => done(text()), binary: () => done(binary()) };
      return response;
    },
  });
}

/** True for the error a call fails with when its deadline passed (or its caller aborted it). */
export function isAbortError(err: unknown): boolean {
  const name = (err as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}
