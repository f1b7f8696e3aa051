import http, { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { ApiException } from './api-exception.js';
import { KUBELET_VERSION } from '../constants.js';
import { goArch, goOS } from '../values/go-platform.js';
import type { ClusterAccess, PreparedRequest } from './cluster-access.js';
import type { RateLimiter, RequestPriority } from './rate-limiter.js';
import type { AnswerUse } from './request-options.js';
import { DEFAULT_REQUEST_TIMEOUTS, isHeartbeat, nodeScopeOf, timeoutForPath, type RequestTimeouts } from './request-timeout.js';
import { DEFAULT_MAX_RETRIES, sendRetryingAfter } from './retry-after.js';

/**
 * The User-Agent of the agent's requests when none is given, shaped as client-go's
 * (`kubelet/<version> (<os>/<arch>) …`). The API server names the field manager of a write
 * after the User-Agent up to its first `/` (`managedFields[].manager`), so our writes are the
 * kubelet's there, as the real kubelet's are; the rest names us in the audit log.
 */
export const DEFAULT_USER_AGENT = kubeletUserAgent('kubelet-pods');

/** A User-Agent whose field manager is `kubelet`, with `product` after the platform. */
export function kubeletUserAgent(product: string): string {
  return `kubelet/${KUBELET_VERSION} (${goOS(process.platform)}/${goArch(process.arch)}) ${product}`;
}

export type HttpVerb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One API call. */
export interface ApiRequest {
  method: HttpVerb;
  /** The API path, without the server's own prefix: `/api/v1/namespaces/default/pods`. */
  path: string;
  /** Query parameters; undefined ones are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** The body's Content-Type: `application/json` by default. */
  contentType?: string;
  /** Headers of the call's options (a patch's Content-Type): they win over the ones above. */
  headers?: Record<string, string>;
  /** What the caller reads of a 2xx answer (request-options.ts); all of it by default. */
  answerUse?: AnswerUse;
}

export interface ApiTransportOptions {
  /** Every call but the heartbeats (`isHeartbeat`, request-timeout.ts) waits for a token first (kubeAPIQPS / kubeAPIBurst); pod status writes yield (`priorityOf`). */
  limiter: RateLimiter;
  /** Deadlines of single calls (src/kube/request-timeout.ts); 10 s for heartbeats, 60 s otherwise. */
  timeouts?: RequestTimeouts;
  /** `DEFAULT_USER_AGENT` when undefined; '' sends none. */
  userAgent?: string;
  /** Waits out a Retry-After; a test passes a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** Retries after a Retry-After answer: 10, as client-go. */
  maxRetries?: number;
}

/** Sends API calls as JSON over node:https (or node:http) and reads the answers. */
export interface ApiTransport {
  readonly access: ClusterAccess;
  /** The parsed JSON answer of a 2xx; an `ApiException` for any other status. */
  call<T>(request: ApiRequest): Promise<T>;
}

interface Answer {
  status: number;
  text: string;
  headers: IncomingHttpHeaders;
}

/** One call's deadline: a timer cleared when the call ends, which destroys the request in flight. */
interface Deadline {
  expired: boolean;
  inFlight: ClientRequest | undefined;
}

const POD_STATUS_PATH = /\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/status$/;

/** Pod status writes yield to everything else (see RequestPriority). */
export function priorityOf(method: string, path: string): RequestPriority {
  if (method !== 'PATCH' && method !== 'PUT') return 'high';
  return POD_STATUS_PATH.test(path) ? 'low' : 'high';
}

/** The query string of a call, `?a=b` or ''. */
export function queryString(query: ApiRequest['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** An answer's headers as client-node reports them: one string per name. */
export function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/**
 * The error of a call abandoned at its deadline, named as api-error.ts's `isAbortError` expects;
 * `notSent` when no connection had taken the request by then (`wasNotSent`).
 */
export function deadlineError(method: string, target: string, timeoutMs: number, notSent = false): Error {
  const err = Object.assign(new Error(`${method} ${target}: no answer within ${timeoutMs} ms`), { name: 'AbortError' });
  return notSent ? Object.assign(err, { notSent: true }) : err;
}

/**
 * True when the call failed at its deadline before any connection took it (it waited for a
 * free one all along), so the API server cannot have acted on it. A call that was sent and
 * then abandoned may have been carried out all the same.
 */
export function wasNotSent(err: unknown): boolean {
  return (err as { notSent?: unknown } | null)?.notSent === true;
}

/** The host of a URL as node:http wants it (an IPv6 literal without its brackets). */
export function requestHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Sends one request over HTTP/1.1 with the prepared agent and reads the whole answer as text.
 * Through the module objects (`https.request`), so that what wraps them (the benchmarks'
 * request counters) sees these requests too.
 */
export function sendHttp1(access: ClusterAccess, prepared: PreparedRequest, method: string, target: string, headers: Record<string, string>, text: string | undefined, deadline?: Deadline): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const { server } = access;
    const send = server.protocol === 'https:' ? https.request : http.request;
    let req: ClientRequest;
    try {
      req = send({ agent: prepared.agent, protocol: server.protocol, hostname: requestHost(server), port: server.port || undefined, method, path: target, headers }, (res: IncomingMessage) => {
        let data = '';
        let ended = false;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          ended = true;
          resolve({ status: res.statusCode ?? 0, text: data, headers: res.headers });
        });
        res.on('error', reject);
        res.on('close', () => {
          if (!ended) reject(new Error(`${method} ${target}: the connection closed before the answer ended`));
        });
      });
    } catch (err) {
      reject(err);
      return;
    }
    req.on('error', reject);
    if (deadline !== undefined) deadline.inFlight = req;
    // A string body given to end() goes out in the same write as the headers.
    req.end(text);
  });
}

/**
 * A 2xx answer as the caller uses it (`AnswerUse`). The resourceVersion is taken from the text:
 * the API server writes an object's `kind` and `apiVersion`, then its `metadata`, whose fields
 * before `resourceVersion` (name, generateName, namespace, selfLink, uid) are plain strings, so
 * a `"resourceVersion":"` after `"metadata":{` with no `{` between is the object's own. Text of
 * another shape is parsed whole.
 */
export function readAnswer(text: string, use: AnswerUse = 'whole'): unknown {
  if (use === 'nothing' || text === '') return undefined;
  if (use === 'resourceVersion') {
    const resourceVersion = leadingResourceVersion(text) ?? (JSON.parse(text) as { metadata?: { resourceVersion?: string } } | null)?.metadata?.resourceVersion;
    return { metadata: { resourceVersion } };
  }
  return JSON.parse(text);
}

const METADATA = '"metadata":{';
const RESOURCE_VERSION = '"resourceVersion":"';

function leadingResourceVersion(text: string): string | undefined {
  const metadata = text.indexOf(METADATA);
  if (metadata < 0) return undefined;
  const open = metadata + METADATA.length - 1;
  const at = text.indexOf(RESOURCE_VERSION, open);
  if (at < 0 || text.lastIndexOf('{', at) !== open) return undefined;
  const from = at + RESOURCE_VERSION.length;
  const end = text.indexOf('"', from);
  const value = end < 0 ? undefined : text.slice(from, end);
  // A resourceVersion is digits; anything escaped is left to the parser.
  return value !== undefined && !value.includes('\\') ? value : undefined;
}

export function createApiTransport(access: ClusterAccess, options: ApiTransportOptions): ApiTransport {
  const timeouts = options.timeouts ?? DEFAULT_REQUEST_TIMEOUTS;
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));

  return {
    access,
    async call<T>(request: ApiRequest): Promise<T> {
      const { method, path } = request;
      const scope = nodeScopeOf(path);
      // Heartbeats skip the bucket but still go out on a later tick, as every call does.
      await (isHeartbeat(method, path, scope) ? Promise.resolve() : options.limiter.acquire(priorityOf(method, path)));
      // The deadline starts once the limiter let the call through: waiting for a token is not counted.
      // A timer of our own rather than AbortSignal.timeout: that one cannot be cancelled, and each
      // call would end in an abort event and a DOMException with its stack long after it is done.
      const timeoutMs = timeoutForPath(path, timeouts, scope);
      const target = `${access.basePath}${path}${queryString(request.query)}`;
      const deadline: Deadline = { expired: false, inFlight: undefined };
      const timer = setTimeout(() => {
        deadline.expired = true;
        const req = deadline.inFlight;
        // A request still queued for one of the agent's connections has no socket yet.
        req?.destroy(deadlineError(method, target, timeoutMs, !req.socket));
      }, timeoutMs);
      try {
        const prepared = await access.prepare();
        const text = request.body === undefined ? undefined : JSON.stringify(request.body);
        const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
        for (const [name, value] of Object.entries(prepared.headers)) headers[name.toLowerCase()] = value;
        if (userAgent !== '') headers['user-agent'] = userAgent;
        if (text !== undefined) {
          headers['content-type'] = request.contentType ?? 'application/json';
          headers['content-length'] = String(Buffer.byteLength(text));
        }
        for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
        const attempt = (): Promise<Answer> => (deadline.expired ? Promise.reject(deadlineError(method, target, timeoutMs, true)) : sendHttp1(access, prepared, method, target, headers, text, deadline));
        const answer = await sendRetryingAfter(attempt, {
          maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
          sleep,
          expired: () => deadline.expired,
          answer: (a) => ({ status: a.status, retryAfter: a.headers['retry-after'] as string | undefined }),
        });
        if (answer.status >= 200 && answer.status < 300) return readAnswer(answer.text, request.answerUse) as T;
        // As client-node: a 401 carries no body, any other failure its Status as raw text.
        if (answer.status === 401) throw new ApiException(401, 'Unauthorized', undefined, flatHeaders(answer.headers));
        throw new ApiException(answer.status, 'Unknown API Status Code!', answer.text, flatHeaders(answer.headers));
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
