import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import type { Cluster, KubeConfig, User } from '@kubernetes/client-node';
import { kpError } from '../errors.js';
import { createConnectionPool, keepAliveAgent, keepAliveHttpAgent, type ConnectionPool } from './connection-pool.js';
import { KubeConfigFile, kubeconfigError, type KubeConfigLike } from './kubeconfig.js';
import { createTokenFile, type TokenFile } from './token-file.js';

/** What one request needs to reach the API server as the kubeconfig's user. */
export interface PreparedRequest {
  /** The connection agent: the pool's keep-alive one, or a proxy agent. */
  agent: http.Agent;
  /** The credentials' headers (Authorization, Impersonate-User). */
  headers: Record<string, string>;
}

/**
 * How the API clients reach the API server of a kubeconfig's current context.
 *
 * `static`: a token (inline or from a token file, read again each minute), a client certificate,
 * basic auth; worked out once, at the first request (the files are read then; a failed read is
 * tried again by the next request), with a keep-alive agent from the connection pool.
 * `client-node`: an exec plugin, an auth provider or a proxy, which only client-node 1.x
 * implements: client-node is loaded (a dynamic import) at the first request and asked for the
 * credentials of every request, as before, so a refreshed token or certificate is used at once.
 */
export interface ClusterAccess {
  readonly kind: 'static' | 'client-node';
  /** The server: origin, and the path prefix of every API path (`basePath`). */
  readonly server: URL;
  /** '' or the server's path prefix, without its trailing slash. */
  readonly basePath: string;
  prepare(): Promise<PreparedRequest>;
  /** For a watch: the same credentials, and an agent kept apart from the pool of short calls. */
  prepareWatch(): Promise<PreparedRequest>;
}

export interface ClusterAccessOptions {
  /** Where the keep-alive agent comes from; one of its own by default. */
  pool?: ConnectionPool;
  /** The user's token file (read again each minute); a `KubeConfigFile`'s own by default. */
  tokenFile?: string;
}

export function createClusterAccess(kubeConfig: KubeConfigLike, options: ClusterAccessOptions = {}): ClusterAccess {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw kpError('KP_ERR_CONFIG_KUBECONFIG', ['its current context names no cluster']);
  const user = kubeConfig.getCurrentUser();
  const server = new URL(cluster.server);
  const basePath = server.pathname.replace(/\/+$/, '');
  const delegated = user?.exec != null || user?.authProvider != null || cluster.proxyUrl != null;
  return delegated ? clientNodeAccess(kubeConfig, cluster, user, server, basePath, options) : staticAccess(kubeConfig, cluster, user, server, basePath, options);
}

function staticAccess(kubeConfig: KubeConfigLike, cluster: Cluster, user: User | null, server: URL, basePath: string, options: ClusterAccessOptions): ClusterAccess {
  const source = kubeConfig instanceof KubeConfigFile ? kubeConfig.path : 'the kubeconfig';
  const tokenFilePath = options.tokenFile ?? (kubeConfig instanceof KubeConfigFile ? kubeConfig.tokenFile : undefined);
  const tokenFile: TokenFile | undefined = tokenFilePath !== undefined ? createTokenFile(tokenFilePath) : undefined;
  const https = server.protocol === 'https:';

  type Identity = { tls: HttpsAgentOptions; headers: Record<string, string>; agent: http.Agent };
  let identity: Promise<Identity> | undefined;
  let watchAgent: http.Agent | undefined;
  const load = (): Promise<Identity> =>
    (identity ??= (async (): Promise<Identity> => {
      // As client-node: a file wins over inline data.
      const ca = await bytes(source, 'certificate-authority', cluster.caFile, cluster.caData);
      const cert = await bytes(source, 'client-certificate', user?.certFile, user?.certData);
      const key = await bytes(source, 'client-key', user?.keyFile, user?.keyData);
      const tls: HttpsAgentOptions = {
        ...(ca !== undefined ? { ca } : {}),
        ...(cert !== undefined ? { cert } : {}),
        ...(key !== undefined ? { key } : {}),
        ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}),
        ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
      };
      const headers: Record<string, string> = {};
      if (user?.username) headers['Authorization'] = `Basic ${Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64')}`;
      if (user?.impersonateUser) headers['Impersonate-User'] = user.impersonateUser;
      if (user?.token) headers['Authorization'] = `Bearer ${user.token}`;
      const agent = https ? (options.pool?.agentFor(tls) ?? keepAliveAgent(tls)) : keepAliveHttpAgent();
      return { tls, headers, agent };
    })().catch((err: unknown) => {
      identity = undefined; // an unreadable certificate file, say: the next request tries again
      throw err;
    }));
  const withToken = async (headers: Record<string, string>): Promise<Record<string, string>> =>
    tokenFile === undefined ? headers : { ...headers, Authorization: `Bearer ${await tokenFile.current()}` };
  return {
    kind: 'static',
    server,
    basePath,
    async prepare() {
      const id = await load();
      return { agent: id.agent, headers: await withToken(id.headers) };
    },
    async prepareWatch() {
      const id = await load();
      watchAgent ??= https ? keepAliveAgent(id.tls) : keepAliveHttpAgent(Infinity);
      return { agent: watchAgent, headers: await withToken(id.headers) };
    },
  };
}

async function bytes(source: string, field: string, file: string | undefined, data: string | undefined): Promise<Buffer | undefined> {
  if (file) {
    try {
      return await readFile(file);
    } catch (err) {
      throw kubeconfigError(source, field, `${file} cannot be read: ${(err as Error).message}`);
    }
  }
  return data ? Buffer.from(data, 'base64') : undefined;
}

type ClientNode = typeof import('@kubernetes/client-node');

function clientNodeAccess(kubeConfig: KubeConfigLike, cluster: Cluster, user: User | null, server: URL, basePath: string, options: ClusterAccessOptions): ClusterAccess {
  let loaded: Promise<{ cn: ClientNode; kc: KubeConfig }> | undefined;
  const load = (): Promise<{ cn: ClientNode; kc: KubeConfig }> =>
    (loaded ??= (async () => {
      const cn = await import('@kubernetes/client-node');
      if (typeof (kubeConfig as Partial<KubeConfig>).applySecurityAuthentication === 'function') return { cn, kc: kubeConfig as KubeConfig };
      const kc = new cn.KubeConfig();
      if (kubeConfig instanceof KubeConfigFile) {
        kc.loadFromFile(kubeConfig.path);
        kc.setCurrentContext(kubeConfig.contextName);
      } else {
        kc.loadFromClusterAndUser(cluster, user ?? { name: 'anonymous' });
      }
      return { cn, kc };
    })().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    }));
  let ownPool: ConnectionPool | undefined;
  // client-node builds an agent for every request; a plain https.Agent is swapped for a pooled
  // keep-alive one of the same TLS identity, a proxy agent is kept.
  const ask = async (): Promise<{ made: http.Agent | undefined; headers: Record<string, string> }> => {
    const { cn, kc } = await load();
    const probe = new cn.RequestContext(cluster.server, cn.HttpMethod.GET);
    await kc.applySecurityAuthentication(probe);
    return { made: probe.getAgent() as http.Agent | undefined, headers: probe.getHeaders() };
  };
  return {
    kind: 'client-node',
    server,
    basePath,
    async prepare() {
      const { made, headers } = await ask();
      if (made?.constructor === HttpsAgent) {
        const pool = options.pool ?? (ownPool ??= createConnectionPool());
        return { agent: pool.agentFor((made as HttpsAgent).options), headers };
      }
      return { agent: made ?? new http.Agent(), headers };
    },
    async prepareWatch() {
      const { made, headers } = await ask();
      return { agent: made ?? new http.Agent(), headers };
    },
  };
}
