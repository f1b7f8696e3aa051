import type { V1Lease, V1Node, V1OwnerReference } from '@kubernetes/client-node';
import { V1MicroTime } from '../kube/micro-time.js';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';
import type { LeaseApi } from '../kube/api-clients.js';
import { apiErrorInfo, isConflict, isNotFound } from '../kube/api-error.js';
import { wasNotSent } from '../kube/api-transport.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { realClock, type Clock } from '../time/clock.js';
import { heldLease } from './held-lease.js';
import { createPeriodicLoop, type LoopSpread, type PeriodicLoop } from './periodic-loop.js';
import { validateNodeName } from '../values/node-name.js';

export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/**
 * Failed renewals in a row from the held copy before the Lease is read again: the kubelet's
 * Lease controller tries an update from its latest copy this many times before it falls back
 * to reading the Lease (component-helpers' lease controller, `maxUpdateRetries`).
 */
export const MAX_RENEWALS_FROM_HELD_COPY = 5;

export interface NodeLeaseOptions {
  nodeName: string;
  api: LeaseApi;
  /**
   * This node's Node, when known (node registration's `getNode`). It gives the Lease its
   * owner reference, so that deleting the Node garbage-collects the Lease. A Lease created
   * before the Node exists gets the reference at a later renewal.
   */
  getNode?: () => Promise<V1Node | undefined>;
  /** 40 s, the kubelet's default. */
  leaseDurationSeconds?: number;
  /** A quarter of the duration (10 s), as the kubelet renews. */
  renewIntervalMs?: number;
  /** First retry delay after a failure; doubles up to `renewIntervalMs`. 500 ms by default. */
  retryInitialMs?: number;
  /** Keeps the renewals of many nodes in one process apart; none by default. */
  spread?: LoopSpread;
  /**
   * Who holds the Lease: the node name by default, as the kubelet. A fleet replica sharing the
   * nodes with others by Lease gives its own identity (src/fleet/lease-shards.ts); then a Lease
   * that another holder renewed within its duration is never written, and `onLost` is told.
   */
  holderIdentity?: string;
  /** Told once per holder that took the Lease, until this node writes it again. */
  onLost?: (holder: string) => void;
  /**
   * Told after each successful create or renewal, with the renewTime it wrote: the moment
   * from which others count the Lease's duration (the fleet's fencing, src/fleet/lease-fence.ts).
   */
  onRenewed?: (renewTime: Date) => void;
  clock?: Clock;
  logger?: Logger;
}

/**
 * Keeps the Lease `kube-node-lease/<node>` held by this node and renewed, which is the
 * heartbeat the node lifecycle controller watches: a node whose lease stops moving is
 * marked NotReady and, later, has its pods evicted.
 */
export interface NodeLease {
  start(): void;
  stop(): Promise<void>;
  /** The Lease as last written, or undefined. */
  currentLease(): V1Lease | undefined;
  /** One create-or-renew attempt now; resolves true on success, never rejects. */
  syncNow(): Promise<boolean>;
}

/** True when the Lease was not renewed within its duration (anyone may take it). */
export function leaseExpired(lease: V1Lease, now: Date): boolean {
  const renew = lease.spec?.renewTime ?? lease.spec?.acquireTime;
  if (renew === undefined) return true;
  return new Date(renew).getTime() + (lease.spec?.leaseDurationSeconds ?? 40) * 1000 < now.getTime();
}

export function createNodeLease(options: NodeLeaseOptions): NodeLease {
  return new NodeLeaseController(options);
}

class NodeLeaseController implements NodeLease {
  readonly #name: string;
  readonly #api: LeaseApi;
  readonly #getNode: (() => Promise<V1Node | undefined>) | undefined;
  readonly #durationSeconds: number;
  readonly #loop: PeriodicLoop;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #holder: string;
  readonly #onLost: ((holder: string) => void) | undefined;
  readonly #onRenewed: ((renewTime: Date) => void) | undefined;

  // The last Lease we wrote: renewing from it saves a GET per renewal. A conflict (someone
  // else wrote it, or a renewal of ours whose answer was lost) reads it again at once, and a
  // failure the server answered, or a call that never left (`#failed`), keeps the copy for up to
  // MAX_RENEWALS_FROM_HELD_COPY renewals in a row, as the kubelet keeps its latest copy.
  // Reading after every failure doubled the requests of nodes whose renewals waited for a
  // connection past their deadline, which on a busy API server made them later still.
  #lease: V1Lease | undefined;
  #failedRenewals = 0;
  // The holder `onLost` was last told of: each attempt reads the Lease again, and says so once.
  #lostTo: string | undefined;

  constructor(options: NodeLeaseOptions) {
    validateNodeName(options.nodeName);
    const duration = options.leaseDurationSeconds ?? 40;
    if (!Number.isInteger(duration) || duration <= 0) {
      throw kpError('KP_ERR_NODE_OPTIONS', ['leaseDurationSeconds', String(duration)]);
    }
    const interval = options.renewIntervalMs ?? (duration * 1000) / 4;
    if (!(interval > 0)) throw kpError('KP_ERR_NODE_OPTIONS', ['renewIntervalMs', String(interval)]);
    this.#name = options.nodeName;
    this.#api = options.api;
    this.#getNode = options.getNode;
    this.#durationSeconds = duration;
    this.#holder = options.holderIdentity ?? options.nodeName;
    this.#onLost = options.holderIdentity !== undefined ? options.onLost ?? (() => undefined) : undefined;
    this.#onRenewed = options.onRenewed;
    this.#clock = options.clock ?? realClock;
    this.#loop = createPeriodicLoop({ attempt: () => this.#attempt(), periodMs: interval, retryInitialMs: options.retryInitialMs ?? 500, clock: this.#clock, ...(options.spread ? { spread: options.spread } : {}) });
    this.#log = childLogger(options.logger, { component: 'node-lease', node: this.#name });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  currentLease(): V1Lease | undefined {
    return this.#lease;
  }

  syncNow(): Promise<boolean> {
    return this.#loop.runNow();
  }

  async #attempt(): Promise<boolean> {
    try {
      const owner = await this.#ownerReference();
      if (this.#lease !== undefined) {
        try {
          const now = this.#clock.now();
          return this.#wrote(await this.#renew(this.#lease, owner, now), now);
        } catch (err) {
          // Written by someone else, or by a renewal of ours whose answer was lost: read it and
          // try again at once, as the kubelet does after a conflict.
          if (!isConflict(err)) throw err;
          this.#forget();
        }
      }
      let base: V1Lease | undefined;
      try {
        base = await this.#api.readNamespacedLease({ name: this.#name, namespace: NODE_LEASE_NAMESPACE });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      const holder = base?.spec?.holderIdentity;
      if (this.#onLost !== undefined && base !== undefined && holder !== undefined && holder !== this.#holder && !leaseExpired(base, this.#clock.now())) {
        if (holder !== this.#lostTo) this.#onLost(holder);
        this.#lostTo = holder;
        return false;
      }
      const now = this.#clock.now();
      return this.#wrote(base === undefined ? await this.#create(owner, now) : await this.#renew(base, owner, now), now);
    } catch (err) {
      this.#failed(err);
      logApiFailure(this.#log, err, { code: 'KP_ERR_NODE_LEASE', subject: this.#name, message: 'node lease create or renew failed' });
      return false;
    }
  }

  // `answer` is the server's to a write of renewTime `at`.
  #wrote(answer: V1Lease, at: Date): true {
    this.#lease = heldLease(this.#lease, answer);
    this.#failedRenewals = 0;
    this.#lostTo = undefined;
    this.#onRenewed?.(at);
    return true;
  }

  // Whether the next attempt renews from the held copy or reads the Lease first. The copy is
  // kept through a call that never left, and through an answer other than 404 or 409: should
  // a 5xx have been written after all, the next renewal is answered 409 and reads. After a
  // call abandoned in flight the 409 that would say so can come too late as well.
  #failed(err: unknown): void {
    if (this.#lease === undefined) return;
    this.#failedRenewals++;
    const code = apiErrorInfo(err).code;
    const copyStillCurrent = wasNotSent(err) || (code !== 0 && code !== 404 && code !== 409);
    if (!copyStillCurrent || this.#failedRenewals >= MAX_RENEWALS_FROM_HELD_COPY) this.#forget();
  }

  #forget(): void {
    this.#lease = undefined;
    this.#failedRenewals = 0;
  }

  #create(owner: V1OwnerReference | undefined, at: Date): Promise<V1Lease> {
    const now = new V1MicroTime(at.getTime());
    return this.#api.createNamespacedLease({
      namespace: NODE_LEASE_NAMESPACE,
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.#name,
          namespace: NODE_LEASE_NAMESPACE,
          ...(owner ? { ownerReferences: [owner] } : {}),
        },
        spec: {
          holderIdentity: this.#holder,
          leaseDurationSeconds: this.#durationSeconds,
          // No acquireTime: a node lease has one holder for its whole life, and the kubelet
          // leaves the field unset.
          renewTime: now,
        },
      },
    });
  }

  #renew(base: V1Lease, owner: V1OwnerReference | undefined, at: Date): Promise<V1Lease> {
    const now = new V1MicroTime(at.getTime());
    const spec = base.spec ?? {};
    const metadata = { ...base.metadata };
    // Keep references others set; make sure ours points at the Node's current UID.
    const others = (metadata.ownerReferences ?? []).filter((r) => !(r.kind === 'Node' && r.name === this.#name));
    const refs = owner ? [...others, owner] : metadata.ownerReferences;
    if (refs !== undefined) metadata.ownerReferences = refs;
    return this.#api.replaceNamespacedLease({
      name: this.#name,
      namespace: NODE_LEASE_NAMESPACE,
      body: {
        ...base,
        metadata,
        spec: {
          ...spec,
          holderIdentity: this.#holder,
          leaseDurationSeconds: this.#durationSeconds,
          // Other fields of the spec are kept; an acquireTime someone else set is re-sent in
          // the microsecond form the API server expects.
          ...(spec.acquireTime ? { acquireTime: new V1MicroTime(new Date(spec.acquireTime).getTime()) } : {}),
          renewTime: now,
        },
      },
    });
  }

  async #ownerReference(): Promise<V1OwnerReference | undefined> {
    if (!this.#getNode) return undefined;
    const node = await this.#getNode();
    const uid = node?.metadata?.uid;
    if (!uid) return undefined;
    return { apiVersion: 'v1', kind: 'Node', name: this.#name, uid };
  }
}
