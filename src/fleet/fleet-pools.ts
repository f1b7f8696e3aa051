// The fleet's two keep-alive pools, the API calls' and the Lease renewals', and their bounds:
// the Lease renewals' smaller while the nodes register, larger once all have.
import { createConnectionPool, type ConnectionPool } from '../kube/connection-pool.js';

/**
 * API connections, at start and in waves of pods alike. Requests are held to kubeAPIQPS, which a
 * few dozen connections carry; more only queue at a busy API server, and every connection opened
 * leaves its TLS buffers in the process's malloc heap after it closes (freed, not given back to
 * the system), so the RSS follows how many were open at once (docs/performance.md, "Fewer
 * connections at start" and "A fifth round").
 */
export const FLEET_MAX_SOCKETS = 64;
/**
 * The Lease client's own connections while the nodes register: a start's burst of Lease creates
 * waits for these instead of taking the API server from the Node writes (docs/performance.md,
 * "The Lease renewals back on HTTP/1.1").
 */
export const FLEET_LEASE_SOCKETS_AT_START = 16;
/**
 * The Lease client's connections once every node has registered: enough that the renewals keep
 * their pace while a wave of pods slows every answer (docs/performance.md, "Lease renewals in a
 * wave of pods"). Those a wave opened close once idle (`IDLE_SOCKET_MS`).
 */
export const FLEET_LEASE_SOCKETS = 64;

export interface FleetPools {
  /** The pool every API call but the Lease renewals goes through. */
  readonly api: ConnectionPool;
  /** The Lease client's pool. */
  readonly leases: ConnectionPool;
  /** Every node has registered (or stopped trying): the Lease pool takes its running bound. */
  registered(): void;
}

export function createFleetPools(): FleetPools {
  const api = createConnectionPool(FLEET_MAX_SOCKETS);
  const leases = createConnectionPool(FLEET_LEASE_SOCKETS_AT_START);
  return {
    api,
    leases,
    registered() {
      leases.setMaxSockets(FLEET_LEASE_SOCKETS);
    },
  };
}
