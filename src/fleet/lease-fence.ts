import type { ApiClients } from '../kube/api-clients.js';
import { kpError } from '../errors.js';
import { childLogger, type Logger } from '../logger.js';
import type { Clock } from '../time/clock.js';

/**
 * Fencing of one node run by a replica under --shard-by-lease. Another replica may take the
 * node's Lease once `renewTime + leaseDuration` has passed, and it judges that by the renewTime
 * this replica wrote. So this replica must have stopped writing the node by then, even when it
 * cannot tell (an API server it cannot reach, a stalled process): its writes for the node are
 * sent only while its last successful renewal is younger than the Lease duration less a
 * margin, which covers a request still in flight and clock skew between replicas. A renewal
 * that succeeds again opens the fence again; `revoke` (another replica holds the Lease) closes
 * it for good.
 */
export interface LeaseFence {
  /** A create or renewal of the Lease succeeded with this renewTime. */
  renewed(renewTime: Date): void;
  /** Another replica holds the Lease: nothing more is written for the node. */
  revoke(): void;
  /** True while writes for the node may be sent. */
  isOpen(): boolean;
  /** The clients with every write of `core` and `events` passing the fence; reads untouched. */
  guard(apis: ApiClients): ApiClients;
}

export interface LeaseFenceOptions {
  nodeName: string;
  clock: Clock;
  /** 40 s, the node Lease's duration. */
  leaseDurationSeconds?: number;
  /** How long before the Lease could expire writes stop; a renew interval (10 s) by default. */
  marginMs?: number;
  logger?: Logger;
}

/** Methods of an API client (src/kube/typed-apis.ts) that change something on the server. */
const WRITE = /^(create|replace|patch|delete)/;

export function createLeaseFence(options: LeaseFenceOptions): LeaseFence {
  const { nodeName, clock } = options;
  const durationMs = (options.leaseDurationSeconds ?? 40) * 1000;
  const marginMs = options.marginMs ?? durationMs / 4;
  const log = childLogger(options.logger, { component: 'lease-fence', node: nodeName });
  let renewedAt: number | undefined;
  let revoked = false;
  // Only the edges are logged: a closed fence refuses many writes.
  let reportedClosed = false;

  const isOpen = (): boolean => !revoked && renewedAt !== undefined && clock.now().getTime() < renewedAt + durationMs - marginMs;

  const refusal = (call: string): Error => {
    const reason = revoked
      ? 'another replica holds the node Lease'
      : renewedAt === undefined
        ? 'this replica has not written the node Lease yet'
        : `this replica last renewed the node Lease ${Math.round((clock.now().getTime() - renewedAt) / 1000)} s ago; another replica may take it after ${durationMs / 1000} s`;
    const err = kpError('KP_ERR_FLEET_FENCED', [nodeName, call, reason]);
    if (!reportedClosed) {
      reportedClosed = true;
      log.warn({ errorCode: err.code, err }, 'node writes stopped until the Lease is renewed');
    }
    return err;
  };

  function guardApi<T extends object>(api: T): T {
    // Each method is wrapped once, on first use, not on every call of a node's loops.
    const wrapped = new Map<PropertyKey, unknown>();
    return new Proxy(api, {
      get(target, prop, receiver) {
        const value: unknown = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        let fn = wrapped.get(prop);
        if (fn === undefined) {
          const method = value as (...args: unknown[]) => unknown;
          fn =
            typeof prop !== 'string' || !WRITE.test(prop)
              ? method.bind(target)
              : (...args: unknown[]) => (isOpen() ? method.apply(target, args) : Promise.reject(refusal(prop)));
          wrapped.set(prop, fn);
        }
        return fn;
      },
    });
  }

  return {
    renewed(renewTime) {
      if (revoked) return;
      renewedAt = renewTime.getTime();
      if (reportedClosed && isOpen()) {
        reportedClosed = false;
        log.info({}, 'node Lease renewed; node writes resumed');
      }
    },
    revoke() {
      revoked = true;
    },
    isOpen,
    guard: (apis) => {
      const core = guardApi(apis.core);
      return { ...apis, core, events: apis.events === apis.core ? core : guardApi(apis.events) };
    },
  };
}
