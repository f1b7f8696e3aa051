// The fleet's two keep-alive pools, the API calls' and the Lease renewals', and their bounds:
// smaller while the nodes register, larger once all have.
import { createConnectionPool, type ConnectionPool } from '../kube/connection-pool.js';

/**
 * API connections while the nodes register. A start's requests are held to kubeAPIQPS, which a
 * few dozen connections carry; and every connection opened leaves its TLS buffers in the
 * process's malloc heap after it closes (freed, not given back to the system), so the RSS
 * after a start follows how many it opened (docs/performance.md, "Fewer connections at start").
 */
export const FLEET_MAX_SOCKETS_AT_START = 64;
/**
 * API connections once every node has registered. A wave of pods keeps this bound: with 64 its
 * deletion was not shown to be as fast (docs/performance.md, "Fewer connections at start").
 */
export const FLEET_MAX_SOCKETS = 256;
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
  /** Every node has registered (or stopped trying): both pools take their running bounds. */
  registered(): void;
}

export function createFleetPools(): FleetPools {
  const api = createConnectionPool(FLEET_MAX_SOCKETS_AT_START);
  const leases = createConnectionPool(FLEET_LEASE_SOCKETS_AT_START);
  return {
    api,
    leases,
    registered() {
      api.setMaxSockets(FLEET_MAX_SOCKETS);
      leases.setMaxSockets(FLEET_LEASE_SOCKETS);
    },
  };
}
