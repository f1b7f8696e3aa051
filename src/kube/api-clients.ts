import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { createSecureContext } from 'node:tls';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  HttpMethod,
  KubeConfig,
  RequestContext,
  ServerConfiguration,
  createConfiguration,
  type SecurityAuthentication,
} from '@kubernetes/client-node';
import type { RateLimiter, RequestPriority } from './rate-limiter.js';
import { createRetryAfterHttpLibrary } from './retry-after.js';
import { createTokenFile, type TokenFile } from './token-file.js';
import { DEFAULT_REQUEST_TIMEOUTS, withRequestDeadlines, type RequestTimeouts } from './request-timeout.js';
import { kpError } from '../errors.js';

/**
 * The Lease calls the node lease makes: a `CoordinationV1Api` fits, and so does the lean
 * client of lease-client.ts. Here, with the other clients, so that kube/ needs nothing of node/.
 */
export type LeaseApi = Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>;

export interface ApiClients {
  kubeConfig: KubeConfig;
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
  /** The current user's token file, read again each minute (src/kube/kubeconfig-file.ts). */
  tokenFile?: string;
  /** Deadlines of single calls (src/kube/request-timeout.ts); 10 s for heartbeats, 60 s otherwise. */
  timeouts?: RequestTimeouts;
  /**
   * The User-Agent of every request: it names the writer in the API server's audit log and
   * managedFields (the fleet's replicas give theirs). client-node's default when absent.
   */
  userAgent?: string;
}

/** Hands out one keep-alive https.Agent per distinct TLS identity (CA, client certificate). */
export interface ConnectionPool {
  agentFor(options: HttpsAgentOptions): HttpsAgent;
}

/**
 * A pool for many API clients: clients with the same CA and client certificate (bearer tokens
 * travel in headers, so all token clients of one cluster) share one agent and its sockets.
 */
export function createConnectionPool(maxSockets = MAX_SOCKETS): ConnectionPool {
  const agents = new Map<string, HttpsAgent>();
  const text = (v: unknown): string => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : Array.isArray(v) ? v.map(text).join(',') : String(v));
  return {
    agentFor(options) {
      const key = [options.ca, options.cert, options.key, options.pfx].map(text).join('|');
      let agent = agents.get(key);
      if (agent === undefined) {
        agent = keepAliveAgent(options, maxSockets);
        agents.set(key, agent);
      }
      return agent;
    },
  };
}

/** Connections kept open to the API server; enough for the mirror sync's concurrency. */
const MAX_SOCKETS = 64;

/**
 * The typed API clients the agent uses, all behind one client-side rate limiter (the kubelet's
 * kubeAPIQPS/kubeAPIBurst apply to its whole client) and one keep-alive connection pool.
 *
 * client-node 1.x gives every request a new https.Agent: a new TCP connection, a TLS handshake
 * and the CA bundle parsed again, each time, which a burst of API calls cannot afford
 * (measured: docs/performance.md). Its `makeApiClient` has no hook for either concern, so the
 * configuration is built here with a request middleware that waits for a token, then swaps the
 * per-request agent for a shared keep-alive one made once from the same TLS options.
 */
export function createApiClients(kubeConfig: KubeConfig, limiter: RateLimiter, options: ApiClientsOptions = {}): ApiClients {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw kpError('KP_ERR_CONFIG_KUBECONFIG', ['its current context names no cluster']);
  let shared: HttpsAgent | undefined;
  const authentication = staticCredentials(kubeConfig, cluster.server, options.tokenFile !== undefined ? createTokenFile(options.tokenFile) : undefined);
  const httpApi = withRequestDeadlines(createRetryAfterHttpLibrary(), options.timeouts ?? DEFAULT_REQUEST_TIMEOUTS);
  const configurationWith = (bucket: RateLimiter): ReturnType<typeof createConfiguration> =>
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      httpApi,
      authMethods: { default: authentication },
      promiseMiddleware: [
        {
          pre: async (context: RequestContext) => {
            await bucket.acquire(priorityOf(context));
            if (options.userAgent !== undefined) context.setHeaderParam('User-Agent', options.userAgent);
            const agent = context.getAgent();
            // Only a plain https.Agent is replaced; proxy agents (a kubeconfig proxy-url) stay.
            if (agent?.constructor === HttpsAgent) {
              shared ??= options.pool?.agentFor((agent as HttpsAgent).options) ?? keepAliveAgent((agent as HttpsAgent).options);
              context.setAgent(shared);
            }
            return context;
          },
          post: async (response) => response,
        },
      ],
    });
  const configuration = configurationWith(limiter);
  const core = new CoreV1Api(configuration);
  return {
    kubeConfig,
    core,
    coordination: new CoordinationV1Api(configuration),
    events: options.eventLimiter !== undefined ? new CoreV1Api(configurationWith(options.eventLimiter)) : core,
    authentication: new AuthenticationV1Api(configuration),
    authorization: new AuthorizationV1Api(configuration),
  };
}

const POD_STATUS_PATH = /\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/status$/;

/** Pod status writes yield to everything else (see RequestPriority). */
export function priorityOf(context: Pick<RequestContext, 'getHttpMethod' | 'getUrl'>): RequestPriority {
  if (context.getHttpMethod() !== HttpMethod.PATCH && context.getHttpMethod() !== HttpMethod.PUT) return 'high';
  return POD_STATUS_PATH.test(new URL(context.getUrl()).pathname) ? 'low' : 'high';
}

/**
 * client-node applies a kubeconfig to every request from scratch: it decodes (or reads from
 * disk) the CA, certificate and key and builds an https.Agent for every request (its cost:
 * docs/performance.md), which the middleware above then throws away. Credentials that cannot change while we run (a
 * token, a client certificate: no exec plugin, no auth provider) are applied once and their
 * headers reused; the others are left to client-node, which refreshes them as needed.
 */
function staticCredentials(kubeConfig: KubeConfig, server: string, tokenFile?: TokenFile): SecurityAuthentication {
  const user = kubeConfig.getCurrentUser();
  if (user === null || user.exec !== undefined || user.authProvider !== undefined) return kubeConfig;
  let applied: Promise<RequestContext> | undefined;
  return {
    getName: () => kubeConfig.getName(),
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      applied ??= (async () => {
        const probe = new RequestContext(server, HttpMethod.GET);
        await kubeConfig.applySecurityAuthentication(probe);
        return probe;
      })().catch((err: unknown) => {
        applied = undefined; // unreadable certificate files, say: the next request tries again
        throw err;
      });
      const probe = await applied;
      for (const [name, value] of Object.entries(probe.getHeaders())) context.setHeaderParam(name, value);
      if (tokenFile !== undefined) context.setHeaderParam('Authorization', `Bearer ${await tokenFile.current()}`);
      const agent = probe.getAgent();
      if (agent !== undefined) context.setAgent(agent);
    },
  };
}

function keepAliveAgent(options: HttpsAgentOptions, maxSockets = MAX_SOCKETS): HttpsAgent {
  const { ca, cert, key, pfx, passphrase } = options;
  return new HttpsAgent({
    ...options,
    keepAlive: true,
    maxSockets,
    // Parsed once; without it every new connection parses the CA bundle again.
    secureContext: createSecureContext({ ca, cert, key, pfx, passphrase }),
  });
}
