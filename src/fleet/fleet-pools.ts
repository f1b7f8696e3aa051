// The fleet's two keep-alive pools, the API calls' and the Lease renewals', and their bounds:
// the Lease renewals' smaller while the nodes register, larger once all have and their
// creates are through.
import { createConnectionPool, type ConnectionPool } from '../kube/connection-pool.js';
import type { Clock } from '../time/clock.js';

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
/**
 * The running bound waits until no Lease write waits for a connection. Raised while the start's
 * Lease creates still waited, it let the next ones open connections beside the busy ones, and
 * their TLS buffers stayed in the malloc heap after they closed (docs/performance.md, "The
 * Lease pool raised once the start's creates are through"). It waits this long at most: half a
 * renewal's deadline, so that renewals queued behind a long backlog (10,000 nodes) still get the
 * running bound in time.
 */
export const LEASE_BOUND_WAIT_MS = 5_000;
/** How often the queue is looked at while the running bound waits. */
export const LEASE_QUEUE_CHECK_MS = 250;

export interface FleetPools {
  /** The pool every API call but the Lease renewals goes through. */
  readonly api: ConnectionPool;
  /** The Lease client's pool. */
  readonly leases: ConnectionPool;
  /**
   * Every node has registered (or stopped trying): the Lease pool takes its running bound once
   * no Lease write waits for a connection, or `LEASE_BOUND_WAIT_MS` later.
   */
  registered(): void;
}

export function createFleetPools(clock: Clock): FleetPools {
  const api = createConnectionPool(FLEET_MAX_SOCKETS);
  const leases = createConnectionPool(FLEET_LEASE_SOCKETS_AT_START);
  return {
    api,
    leases,
    registered() {
      const deadline = clock.monotonic() + LEASE_BOUND_WAIT_MS;
      const raiseOnceDrained = (): void => {
        if (leases.queued() === 0 || clock.monotonic() >= deadline) leases.setMaxSockets(FLEET_LEASE_SOCKETS);
        else clock.setTimeout(raiseOnceDrained, LEASE_QUEUE_CHECK_MS);
      };
      raiseOnceDrained();
    },
  };
}
