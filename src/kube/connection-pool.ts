import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { createSecureContext } from 'node:tls';

/** Hands out one keep-alive https.Agent per distinct TLS identity (CA, client certificate). */
export interface ConnectionPool {
  agentFor(options: HttpsAgentOptions): HttpsAgent;
}

/** Connections kept open to the API server; enough for the mirror sync's concurrency. */
export const MAX_SOCKETS = 64;

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

export function keepAliveAgent(options: HttpsAgentOptions, maxSockets = MAX_SOCKETS): HttpsAgent {
  const { ca, cert, key, pfx, passphrase } = options;
  return new HttpsAgent({
    ...options,
    keepAlive: true,
    maxSockets,
    // Parsed once; without it every new connection parses the CA bundle again.
    secureContext: createSecureContext({ ca, cert, key, pfx, passphrase }),
  });
}
