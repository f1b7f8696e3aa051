import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { V1UserInfo } from '@kubernetes/client-node';
import type { AuthenticationV1Api, AuthorizationV1Api } from '../kube/typed-apis.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { childLogger, type Logger } from '../logger.js';
import { realClock, type Clock } from '../time/clock.js';
import { requestAttributes } from './request-attributes.js';
import { send, type RequestGuard } from './server.js';

/** Who made a request, as the API server's authenticators describe users. */
export interface RequestUser {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export interface KubeletAuthOptions {
  /** The node whose `nodes/<subresource>` the requests are authorized against. */
  nodeName: string;
  /**
   * Client certificates authenticate (the server verifies them against
   * `authentication.x509.clientCAFile`; this reads its verdict): CN is the user, O the groups.
   */
  x509: boolean;
  /** Bearer tokens authenticate through a TokenReview; undefined: they do not. */
  tokenReviews?: Pick<AuthenticationV1Api, 'createTokenReview'>;
  tokenCacheTTLMs?: number;
  /** Requests without credentials are system:anonymous instead of refused. */
  anonymous: boolean;
  /** 'AlwaysAllow', or SubjectAccessReviews through this client ('Webhook'). */
  authorization: 'AlwaysAllow' | Pick<AuthorizationV1Api, 'createSubjectAccessReview'>;
  authorizedCacheTTLMs?: number;
  unauthorizedCacheTTLMs?: number;
  clock?: Clock;
  logger?: Logger;
}

const ANONYMOUS: RequestUser = Object.freeze({ username: 'system:anonymous', groups: Object.freeze(['system:unauthenticated']) });
const CLIENT_AUTH_USAGE = '1.3.6.1.5.5.7.3.2';

/** Bounded caches: past this many entries, the oldest answers go first. */
const MAX_CACHE_ENTRIES = 4096;

/**
 * The kubelet port's filter, as the kubelet's: authenticate (client certificate, then bearer
 * token through a TokenReview, then anonymous if allowed; credentials that are present but
 * wrong get 401 even when anonymous requests are allowed), then authorize the request's
 * `nodes/<subresource>` (request-attributes.ts) with a SubjectAccessReview, answering 401, 403
 * or, when the API server cannot be asked, 401 (authentication) or 500 (authorization). Answers
 * are cached for the configured TTLs, tokens by their SHA-256 only. Tokens and header values
 * never reach a log line.
 */
export function createKubeletAuth(options: KubeletAuthOptions): RequestGuard {
  const clock = options.clock ?? realClock;
  const log = childLogger(options.logger, { component: 'kubelet-auth' });
  const tokenCache = new TtlCache<RequestUser | null>(clock);
  const decisionCache = new TtlCache<boolean>(clock);

  async function authenticateToken(token: string): Promise<RequestUser | null | 'error'> {
    const reviews = options.tokenReviews;
    if (reviews === undefined) return null;
    const key = createHash('sha256').update(token).digest('hex');
    const cached = tokenCache.get(key);
    if (cached !== undefined) return cached;
    let user: RequestUser | null;
    try {
      const review = await reviews.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
      user = review.status?.authenticated === true && review.status.user?.username ? toUser(review.status.user) : null;
    } catch (err) {
      logApiFailure(log, err, { code: 'KP_ERR_SERVER_AUTHN', subject: 'a bearer token', message: 'token review failed' });
      return 'error';
    }
    tokenCache.set(key, user, options.tokenCacheTTLMs ?? 120_000);
    return user;
  }

  async function authenticate(req: IncomingMessage): Promise<RequestUser | null | 'error'> {
    const socket = req.socket as Partial<TLSSocket>;
    if (options.x509 && typeof socket.getPeerCertificate === 'function') {
      const peer = socket.getPeerCertificate();
      if (peer !== null && Object.keys(peer).length > 0) {
        // A certificate the CA did not sign, or not meant for client authentication, is wrong
        // credentials: 401, whatever else the request carries.
        const usages = peer.ext_key_usage;
        if (socket.authorized !== true || (usages !== undefined && !usages.includes(CLIENT_AUTH_USAGE))) return null;
        const groups = peer.subject?.O;
        const cn = peer.subject?.CN;
        if (typeof cn === 'string' && cn !== '') {
          return { username: cn, groups: groups === undefined ? [] : Array.isArray(groups) ? groups : [groups] };
        }
        return null;
      }
    }
    // Without token authentication the header is not looked at, as in the API server's chain;
    // a bearer token it looks at and does not accept is wrong credentials.
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (bearer !== null && options.tokenReviews !== undefined) return authenticateToken(bearer[1]!);
    return options.anonymous ? ANONYMOUS : null;
  }

  async function allowed(user: RequestUser, verb: string, subresource: string): Promise<boolean | 'error'> {
    const authz = options.authorization;
    if (authz === 'AlwaysAllow') return true;
    const key = JSON.stringify([user.username, user.uid, user.groups, user.extra, verb, subresource]);
    const cached = decisionCache.get(key);
    if (cached !== undefined) return cached;
    let decision: boolean;
    try {
      const review = await authz.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            ...(user.uid !== undefined ? { uid: user.uid } : {}),
            groups: [...user.groups],
            ...(user.extra !== undefined ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
            resourceAttributes: { verb, group: '', version: 'v1', resource: 'nodes', subresource, name: options.nodeName },
          },
        },
      });
      decision = review.status?.allowed === true;
    } catch (err) {
      logApiFailure(log, err, {
        code: 'KP_ERR_SERVER_AUTHZ',
        subject: `${user.username} ${verb} nodes/${subresource}`,
        message: 'subject access review failed',
      });
      return 'error';
    }
    decisionCache.set(key, decision, decision ? (options.authorizedCacheTTLMs ?? 300_000) : (options.unauthorizedCacheTTLMs ?? 30_000));
    return decision;
  }

  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> => {
    const user = await authenticate(req);
    if (user === null || user === 'error') {
      send(res, 401, 'text/plain; charset=utf-8', 'Unauthorized');
      return false;
    }
    const { verb, subresources } = requestAttributes(req.method ?? '', path);
    for (const subresource of subresources) {
      const decision = await allowed(user, verb, subresource);
      if (decision === 'error') {
        send(res, 500, 'text/plain; charset=utf-8', `Authorization error (user=${user.username}, verb=${verb}, resource=nodes, subresource=${subresource})`);
        return false;
      }
      if (decision) return true;
    }
    log.debug({ user: user.username, verb, subresources }, 'request forbidden');
    send(res, 403, 'text/plain; charset=utf-8', `Forbidden (user=${user.username}, verb=${verb}, resource=nodes, subresource(s)=[${subresources.join(' ')}])\n`);
    return false;
  };
}

function toUser(u: V1UserInfo): RequestUser {
  return {
    username: u.username ?? '',
    ...(u.uid !== undefined && u.uid !== '' ? { uid: u.uid } : {}),
    groups: u.groups ?? [],
    ...(u.extra !== undefined ? { extra: u.extra } : {}),
  };
}

/** A map whose entries expire; a TTL of 0 stores nothing. */
class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expires: number }>();
  constructor(readonly clock: Clock) {}

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expires <= this.clock.monotonic()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: this.clock.monotonic() + ttlMs });
    if (this.#entries.size > MAX_CACHE_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
