import type { V1Lease } from '@kubernetes/client-node';
import { V1MicroTime } from '../kube/micro-time.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-error.js';
import { childLogger, type Logger } from '../logger.js';
import type { LeaseApi } from '../kube/api-clients.js';
import { leaseExpired, NODE_LEASE_NAMESPACE } from '../node/node-lease.js';
import { createPeriodicLoop, type PeriodicLoop } from '../node/periodic-loop.js';
import type { Clock } from '../time/clock.js';
import { nodeFraction, nodeLoopSpread } from './spread.js';

/**
 * Replicas of a fleet sharing its nodes without a coordinator of their own, as kwok does: a
 * node belongs to the replica that holds its Lease (`holderIdentity` = the replica's identity).
 * For each node it does not hold, a replica tries every renew interval to take the Lease:
 * create it when there is none, take it back when it names this replica, take it over with an
 * update carrying the resourceVersion it read (so of two replicas only one wins) once it has
 * expired; a Lease another replica renewed within its duration is left alone. Only once it
 * holds the Lease does it start the node (`onAcquired`); the node's own Lease controller then
 * renews it under the same identity and calls `release` when a renewal finds another holder.
 */
export interface LeaseShards {
  start(): void;
  stop(): Promise<void>;
  /** The node's agent lost or gave up its Lease: try to take it again from now on. */
  release(nodeName: string): void;
  /** A node that came after the start (an adopted one): try to take its Lease from now on. */
  addNode(nodeName: string): void;
  /** A node that is no longer the fleet's (an adopted node released): stop trying, forget it. */
  removeNode(nodeName: string): Promise<void>;
  held(): string[];
}

export interface LeaseShardsOptions {
  identity: string;
  nodes: readonly string[];
  api: LeaseApi;
  clock: Clock;
  logger?: Logger;
  /** This replica now holds the node's Lease, renewed at `renewTime`: start the node. */
  onAcquired: (nodeName: string, renewTime: Date) => void;
  leaseDurationSeconds?: number;
  /** How often a node not held is tried; 10 s (the renew interval). */
  claimIntervalMs?: number;
}

export function createLeaseShards(options: LeaseShardsOptions): LeaseShards {
  const { identity, api, clock } = options;
  const duration = options.leaseDurationSeconds ?? 40;
  const interval = options.claimIntervalMs ?? 10_000;
  const log = childLogger(options.logger, { component: 'lease-shards', identity });
  const held = new Set<string>();
  const loops = new Map<string, PeriodicLoop>();
  let running = false;

  const body = (name: string, at: Date, base?: V1Lease): V1Lease => {
    const now = new V1MicroTime(at.getTime());
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(base?.metadata ?? {}), name, namespace: NODE_LEASE_NAMESPACE },
      spec: { ...(base?.spec ?? {}), holderIdentity: identity, leaseDurationSeconds: duration, acquireTime: now, renewTime: now },
    };
  };

  /** The renewTime written when this replica took the Lease, else undefined. */
  async function claim(name: string): Promise<Date | undefined> {
    let lease: V1Lease | undefined;
    try {
      lease = await api.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE });
    } catch (err) {
      if (!isNotFound(err)) return undefined;
    }
    const now = clock.now();
    try {
      if (lease === undefined) await api.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: body(name, now) });
      else if (lease.spec?.holderIdentity === identity || leaseExpired(lease, now)) await api.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: body(name, now, lease) });
      else return undefined;
    } catch (err) {
      if (isConflict(err) || isAlreadyExists(err)) return undefined; // another replica was faster
      return undefined;
    }
    return now;
  }

  const timers = new Map<string, ReturnType<Clock['setTimeout']>>();
  const removed = new Set<string>();

  function watchNode(name: string, delayMs = 0): void {
    if (!running || held.has(name) || loops.has(name) || removed.has(name)) return;
    if (delayMs > 0) {
      if (timers.has(name)) return;
      const timer = clock.setTimeout(() => {
        timers.delete(name);
        watchNode(name);
      }, delayMs);
      timers.set(name, timer);
      return;
    }
    const loop = createPeriodicLoop({
      periodMs: interval,
      retryInitialMs: interval,
      clock,
      spread: nodeLoopSpread(name, interval, 0.1),
      attempt: async () => {
        if (removed.has(name)) return true;
        const renewTime = await claim(name);
        if (renewTime === undefined) return true; // checked: not ours; look again next period
        // Released while the claim was in flight: the Lease taken expires unrenewed.
        if (removed.has(name)) return true;
        held.add(name);
        loops.delete(name);
        void loop.stop();
        log.info({ node: name }, 'took the node lease');
        options.onAcquired(name, renewTime);
        return true;
      },
    });
    loops.set(name, loop);
    loop.start();
  }

  return {
    start() {
      running = true;
      // Replicas started together split the nodes: each first tries a node at a phase of the
      // interval drawn from the node and its own identity, so the earliest differs by node.
      for (const name of options.nodes) watchNode(name, nodeFraction(name, identity) * interval);
    },
    async stop() {
      running = false;
      for (const t of timers.values()) clock.clearTimeout(t);
      timers.clear();
      await Promise.all([...loops.values()].map((l) => l.stop()));
      loops.clear();
    },
    release(name) {
      if (!held.delete(name)) return;
      log.info({ node: name }, 'node lease held by another replica; node stopped here');
      watchNode(name);
    },
    addNode(name) {
      removed.delete(name);
      // Within a second, at a phase drawn from the node and this replica, so that replicas
      // take about even shares of the nodes created together.
      watchNode(name, nodeFraction(name, identity) * Math.min(interval, 1000));
    },
    async removeNode(name) {
      removed.add(name);
      held.delete(name);
      const timer = timers.get(name);
      if (timer !== undefined) clock.clearTimeout(timer);
      timers.delete(name);
      const loop = loops.get(name);
      loops.delete(name);
      await loop?.stop();
      // An attempt in flight has ended (it saw the removal); nothing of the node is left.
      removed.delete(name);
    },
    held: () => [...held],
  };
}
