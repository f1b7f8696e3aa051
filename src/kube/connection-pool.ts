import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent, type AgentOptions as HttpsAgentOptions } from 'node:https';
import { createSecureContext } from 'node:tls';

/** Hands out one keep-alive https.Agent per distinct TLS identity (CA, client certificate). */
export interface ConnectionPool {
  agentFor(options: HttpsAgentOptions): HttpsAgent;
  /** How many connections each agent may have open from now on (open ones stay until idle). */
  setMaxSockets(maxSockets: number): void;
  /** Requests waiting for a connection, over all its agents. */
  queued(): number;
}

/** Connections kept open to the API server; enough for the mirror sync's concurrency. */
export const MAX_SOCKETS = 64;

/**
 * How long a connection may sit unused before it is closed: longer than the nodes' 10 s loops,
 * so steady periodic calls keep theirs, while the extra connections a burst opened (a start,
 * a wave of pods) go once it is over instead of each holding its TLS state for good.
 */
export const IDLE_SOCKET_MS = 15_000;

/**
 * A pool for many API clients: clients with the same CA and client certificate (bearer tokens
 * travel in headers, so all token clients of one cluster) share one agent and its sockets.
 */
export function createConnectionPool(initialMaxSockets = MAX_SOCKETS, idleMs = IDLE_SOCKET_MS): ConnectionPool {
  let maxSockets = initialMaxSockets;
  const agents = new Map<string, HttpsAgent>();
  const text = (v: unknown): string => (v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('base64') : Array.isArray(v) ? v.map(text).join(',') : String(v));
  return {
    agentFor(options) {
      const key = [options.ca, options.cert, options.key, options.pfx].map(text).join('|');
      let agent = agents.get(key);
      if (agent === undefined) {
        agent = keepAliveAgent(options, maxSockets, idleMs);
        agents.set(key, agent);
      }
      return agent;
    },
    setMaxSockets(n) {
      maxSockets = n;
      // node's agent reads the bound at each new request; open connections stay until idle.
      for (const agent of agents.values()) agent.maxSockets = n;
    },
    queued() {
      let waiting = 0;
      for (const agent of agents.values()) for (const requests of Object.values(agent.requests)) waiting += requests?.length ?? 0;
      return waiting;
    },
  };
}

/** The plain-HTTP counterpart of `keepAliveAgent`, with the same idle timeout. */
export function keepAliveHttpAgent(maxSockets = MAX_SOCKETS, idleMs = IDLE_SOCKET_MS): HttpAgent {
  return new HttpAgent({ keepAlive: true, maxSockets, timeout: idleMs });
}

export function keepAliveAgent(options: HttpsAgentOptions, maxSockets = MAX_SOCKETS, idleMs = IDLE_SOCKET_MS): HttpsAgent {
  // The certificates go into the secure context only: node's agent names each request's
  // connection group by its options, and a CA or key left among them is turned into text three
  // times a request to build that name. The context verifies the server as they would.
  const { ca, cert, key, pfx, passphrase, ...rest } = options;
  return new HttpsAgent({
    ...rest,
    keepAlive: true,
    maxSockets,
    // node's agent closes only free connections at this timeout; a slow answer or a long watch keeps its own.
    timeout: idleMs,
    // Parsed once; without it every new connection parses the CA bundle again.
    secureContext: createSecureContext({ ca, cert, key, pfx, passphrase }),
  });
}
