import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import https, { Agent as HttpsAgent } from 'node:https';
import { ApiException, HttpMethod, RequestContext, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import type { ConnectionPool, LeaseApi } from './api-clients.js';
import type { RateLimiter } from './rate-limiter.js';
import { DEFAULT_REQUEST_TIMEOUTS } from './request-timeout.js';
import { DEFAULT_MAX_RETRIES, sendRetryingAfter } from './retry-after.js';
import { createH2Session, type H2Session } from './h2-session.js';
import { createTokenFile } from './token-file.js';

export interface LeaseClientOptions {
  /** Where the keep-alive agent comes from; the fleet passes the pool its other clients use. */
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
  /**
   * Sends over one HTTP/2 connection (src/kube/h2-session.ts) instead of the keep-alive pool:
   * the fleet's renewals that fall in one turn of the event loop then leave in one write.
   * Off by default.
   */
  http2?: boolean;
}

/** Reads, creates and replaces Leases; the three calls of `LeaseApi`. */
type LeaseParams = { name: string; namespace: string };

/**
 * A Lease client that does what the node lease needs in one plain JSON request per call.
 *
 * Renewing a Lease through client-node costs, per call, its object serialiser walking the
 * type map both ways, node-fetch streaming the body as a second write after the headers, a
 * fresh Headers object and a middleware chain, for each of a fleet's many renewals (what that
 * cost: docs/performance.md). This client sends the
 * headers and the JSON body in one socket write over the same keep-alive pool, after the same
 * rate limiter, with the credentials worked out once (a token file read again each minute), the
 * same deadline and the same client-go retries after a 429 or 5xx with Retry-After
 * (src/kube/retry-after.ts), and fails with the same `ApiException` (HTTP status, raw Status
 * body, response headers) client-node throws, so `api-error.ts` and the lease logic cannot tell
 * the two apart. What it returns is the parsed JSON: timestamps stay
 * strings, which the lease logic accepts (it reads them with `new Date`).
 *
 * Returns undefined when the kubeconfig needs what only client-node does: credentials that may
 * change while we run (exec plugin, auth provider), a proxy, or a plain-http server.
 */
export function createLeaseClient(kubeConfig: KubeConfig, limiter: RateLimiter, options: LeaseClientOptions = {}): LeaseApi | undefined {
  const cluster = kubeConfig.getCurrentCluster();
  const user = kubeConfig.getCurrentUser();
  if (cluster === null || cluster.proxyUrl !== undefined || !cluster.server.startsWith('https:')) return undefined;
  if (user !== null && (user.exec !== undefined || user.authProvider !== undefined)) return undefined;
  const server = new URL(cluster.server);
  const base = server.pathname.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUTS.heartbeatMs;
  const tokenFile = options.tokenFile !== undefined ? createTokenFile(options.tokenFile) : undefined;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const path = (namespace: string, name?: string): string =>
    `${base}/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases${name === undefined ? '' : `/${encodeURIComponent(name)}`}`;

  // What client-node would put on each request, worked out at the first call: the
  // Authorization header (token or basic) and an https.Agent with the CA, the client
  // certificate and the TLS verification settings, swapped for the pool's keep-alive one.
  type Transport = { agent: HttpsAgent; h2: H2Session | undefined; auth: Record<string, string> };
  let transport: Promise<Transport> | undefined;
  const connect = (): Promise<Transport> =>
    (transport ??= (async () => {
      const probe = new RequestContext(cluster.server, HttpMethod.GET);
      await kubeConfig.applySecurityAuthentication(probe);
      const made = probe.getAgent() as HttpsAgent;
      const agent = options.pool?.agentFor(made.options) ?? new HttpsAgent({ ...made.options, keepAlive: true });
      const { ca, cert, key, rejectUnauthorized, servername } = made.options;
      const h2 = options.http2 === true ? createH2Session(server.origin, { ca, cert, key, ...(rejectUnauthorized !== undefined ? { rejectUnauthorized } : {}), ...(servername ? { servername } : {}) }) : undefined;
      return { agent, h2, auth: probe.getHeaders() };
    })().catch((err: unknown) => {
      transport = undefined; // an unreadable certificate file, say: the next call tries again
      throw err;
    }));

  /** One call's deadline: a timer cleared when the call ends, which destroys the request in flight. */
  interface Deadline {
    expired: boolean;
    inFlight: { destroy(err: Error): void } | undefined;
  }

  const send = (t: Transport, method: string, target: string, headers: Record<string, string>, text: string | undefined, deadline: Deadline): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> =>
    t.h2 !== undefined ? t.h2.request(method, target, headers, text, (stream) => (deadline.inFlight = stream)) : sendHttp1(t.agent, method, target, headers, text, deadline);

  const sendHttp1 = (agent: HttpsAgent, method: string, target: string, headers: Record<string, string>, text: string | undefined, deadline: Deadline): Promise<{ status: number; text: string; headers: IncomingHttpHeaders }> =>
    new Promise((resolve, reject) => {
      // Through the module object, so that what wraps https.request (the fleet bench's request
      // counter) sees these requests too.
      const req = https.request({ agent, protocol: server.protocol, hostname: server.hostname, port: server.port, method, path: target, headers }, (res: IncomingMessage) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: data, headers: res.headers }));
        res.on('error', reject);
      });
      req.on('error', reject);
      deadline.inFlight = req;
      // A string body given to end() goes out in the same write as the headers.
      req.end(text);
    });

  const call = async (method: 'GET' | 'POST' | 'PUT', target: string, body?: V1Lease): Promise<V1Lease> => {
    // Lease writes are `high` (src/kube/api-clients.ts, priorityOf): they go before status writes.
    await limiter.acquire('high');
    // The deadline starts once the limiter let the call through, as the typed clients' does (withRequestDeadlines).
    // A timer of our own rather than AbortSignal.timeout: that one cannot be cancelled, so each
    // call would end, ten seconds later, in an abort event and a DOMException with its stack,
    // 100 of them a second at 1,000 nodes.
    const deadline: Deadline = { expired: false, inFlight: undefined };
    const timer = setTimeout(() => {
      deadline.expired = true;
      // Named as the typed clients' aborted calls are, so api-error.ts words it the same way.
      deadline.inFlight?.destroy(Object.assign(new Error(`${method} ${target}: no answer within ${timeoutMs} ms`), { name: 'AbortError' }));
    }, timeoutMs);
    try {
      const t = await connect();
      const text = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { ...t.auth, accept: 'application/json' };
      if (tokenFile !== undefined) headers['Authorization'] = `Bearer ${await tokenFile.current()}`;
      if (options.userAgent !== undefined) headers['User-Agent'] = options.userAgent;
      if (text !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(text));
      }
      const response = await sendRetryingAfter(() => send(t, method, target, headers, text, deadline), {
        maxRetries: DEFAULT_MAX_RETRIES,
        sleep,
        expired: () => deadline.expired,
        answer: (r) => ({ status: r.status, retryAfter: r.headers['retry-after'] as string | undefined }),
      });
      if (response.status >= 200 && response.status < 300) return JSON.parse(response.text) as V1Lease;
      const headersOut = response.headers as Record<string, string>;
      // As client-node: a 401 carries no body, any other failure the Status as raw text.
      if (response.status === 401) throw new ApiException(401, 'Unauthorized', undefined, headersOut);
      throw new ApiException(response.status, 'Unknown API Status Code!', response.text, headersOut);
    } finally {
      clearTimeout(timer);
    }
  };

  const client: LeaseApi = {
    readNamespacedLease: (p: LeaseParams) => call('GET', path(p.namespace, p.name)),
    createNamespacedLease: (p: { namespace: string; body: V1Lease }) => call('POST', path(p.namespace), p.body),
    replaceNamespacedLease: (p: LeaseParams & { body: V1Lease }) => call('PUT', path(p.namespace, p.name), p.body),
  };
  return client;
}
