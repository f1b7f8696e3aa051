import type { KubeConfigLike as KubeConfig } from '../kube/kubeconfig.js';

import { API_SERVER_SOURCE, PodOperation } from '../constants.js';
import { kpError } from '../errors.js';
import { sameVersion } from '../kube/object-version.js';
import { createReflector, type ObjectEventType, type Reflector, type ReflectorStats } from '../kube/reflector.js';
import { randomWatchTimeoutSeconds } from '../kube/watch-timeout.js';
import type { Pod } from '../pod/types.js';
import type { Clock } from '../time/clock.js';
import { objectKey } from '../values/object-key.js';
import { kubePodListWatch, podReflectorWording, type PodListWatch } from './pod-list-watch.js';
import type { PodUpdate, SetDelta, SourceLogger } from './types.js';

export interface ApiserverSourceOptions {
  /** Credentials of the node; used to build the list and watch calls. */
  kubeConfig?: KubeConfig;
  /** Replaces the list and watch built from kubeConfig (tests). One of the two is required. */
  listWatch?: PodListWatch;
  nodeName: string;
  /**
   * Receives `{ op: 'SET', source: 'api', pods }` with the full current set after every change
   * (watch events of one event-loop turn give one SET). Every SET but the first carries a
   * `delta` from the previous SET, so the merger need not look at the unchanged pods.
   */
  onUpdate: (update: PodUpdate) => void;
  logger?: SourceLogger;
  /** Retry pauses, the watchdog and the list timeout; the real clock by default. */
  clock?: Clock;
  /** First retry pause after an error; doubles per consecutive error. Default 500 ms. */
  backoffInitialMs?: number;
  /** Longest retry pause. Default 30 s. */
  backoffMaxMs?: number;
  /**
   * Server-side timeout of each watch request. Default: random in [300, 600) s, so many
   * nodes do not reconnect in step.
   */
  watchTimeoutSeconds?: number;
  /**
   * A watch (or list) that has delivered nothing for this long is abandoned and restarted.
   * Default: the watch timeout plus 60 s (src/kube/reflector.ts says why).
   */
  watchdogMs?: number;
}

export type ApiserverSourceStats = ReflectorStats;

/** The `api` pod source: every pod bound to this node, as full SETs. */
export interface ApiserverSource {
  /** Starts listing and watching; a second call does nothing. After stop(), starts again. */
  start(): void;
  /** Stops and closes the watch connection; resolves when the loop has ended. */
  stop(): Promise<void>;
  /** Counters of what the loop did so far. */
  stats(): ApiserverSourceStats;
}

/**
 * Creates the API-server source: a reflector (src/kube/reflector.ts) over the pods bound to
 * this node. Like the kubelet's, it keeps a store keyed `<ns>/<name>` (so equal names in two
 * namespaces are two pods) and after the list and after every watch event sends the whole
 * store as one SET; the pods are passed on unmodified. A relist keeps the objects of pods whose
 * resourceVersion did not change, so its SET names only what changed.
 */
export function createApiserverSource(options: ApiserverSourceOptions): ApiserverSource {
  return new ApiserverSourceImpl(options);
}

class ApiserverSourceImpl implements ApiserverSource {
  readonly #onUpdate: (update: PodUpdate) => void;
  readonly #reflector: Reflector;

  // Made at the first pod, dropped when the last goes: a fleet node without pods holds no map.
  #pods: Map<string, Pod> | undefined;
  /** The `pods` of the last SET sent: the base of the next SET's delta. */
  #lastSent: Pod[] | undefined;
  /** Keys changed since the last SET, with the pod each had in it. */
  #touched: Map<string, Pod | undefined> | undefined;
  #emitScheduled = false;
  /** From start() until stop() has ended (a start() meanwhile does nothing, as the reflector's). */
  #started = false;
  /** False from stop() to the next start(): a SET scheduled before is dropped. */
  #running = false;

  constructor(options: ApiserverSourceOptions) {
    const timeoutSeconds = options.watchTimeoutSeconds ?? randomWatchTimeoutSeconds();
    let listWatch: PodListWatch;
    if (options.listWatch !== undefined) {
      listWatch = options.listWatch;
    } else if (options.kubeConfig !== undefined) {
      listWatch = kubePodListWatch(options.kubeConfig, options.nodeName, timeoutSeconds);
    } else {
      throw kpError('KP_ERR_SOURCE_OPTIONS', ['kubeConfig', 'neither kubeConfig nor listWatch']);
    }
    this.#onUpdate = options.onUpdate;
    this.#reflector = createReflector({
      listWatch,
      onList: (items) => this.#replace(items),
      onEvent: (type, pod) => this.#apply(type, pod),
      wording: podReflectorWording(options.nodeName),
      logger: options.logger,
      clock: options.clock,
      backoffInitialMs: options.backoffInitialMs,
      backoffMaxMs: options.backoffMaxMs,
      watchTimeoutSeconds: timeoutSeconds,
      watchdogMs: options.watchdogMs,
    });
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    this.#running = true;
    this.#reflector.start();
  }

  async stop(): Promise<void> {
    if (!this.#started) return;
    this.#running = false;
    await this.#reflector.stop();
    this.#started = false;
  }

  stats(): ApiserverSourceStats {
    return this.#reflector.stats();
  }

  /** A (re)list: the store becomes the listed pods, sent at once as one SET. */
  #replace(items: Pod[]): void {
    const previous = this.#pods;
    const next = new Map<string, Pod>();
    for (const item of items) {
      const key = objectKey(item);
      const known = previous?.get(key);
      // The same version of a pod we already hold: keep that object, so the SET's delta
      // leaves it out and the merger does not look at it.
      next.set(key, known !== undefined && sameVersion(known, item) ? known : item);
      this.#touch(key);
    }
    for (const key of previous?.keys() ?? []) if (!next.has(key)) this.#touch(key);
    this.#pods = next.size > 0 ? next : undefined;
    this.#emit();
  }

  #apply(type: ObjectEventType, pod: Pod): void {
    const key = objectKey(pod);
    this.#touch(key);
    if (type === 'DELETED') this.#pods?.delete(key);
    else (this.#pods ??= new Map()).set(key, pod);
    this.#scheduleEmit();
  }

  /** Sends the store as a SET, with what changed since the previous SET, if there was one. */
  #emit(): void {
    this.#emitScheduled = false;
    const pods = this.#pods === undefined ? [] : [...this.#pods.values()];
    let delta: SetDelta | undefined;
    if (this.#lastSent !== undefined) {
      const changed: Pod[] = [];
      const removed: Pod[] = [];
      for (const [key, before] of this.#touched ?? []) {
        const after = this.#pods?.get(key);
        if (after !== undefined && after !== before) changed.push(after);
        if (before !== undefined && before.metadata?.uid !== after?.metadata?.uid) removed.push(before);
      }
      delta = { base: this.#lastSent, changed, removed };
    }
    this.#touched = undefined;
    this.#lastSent = pods;
    this.#onUpdate({ op: PodOperation.SET, source: API_SERVER_SOURCE, pods, ...(delta ? { delta } : {}) });
  }

  /** Records that `key` is about to change, with the pod it had in the last SET. */
  #touch(key: string): void {
    const touched = (this.#touched ??= new Map());
    if (!touched.has(key)) touched.set(key, this.#pods?.get(key));
  }

  /**
   * Watch events that arrive in the same turn of the event loop (one chunk of the watch
   * stream) are sent as one SET: each SET costs O(pods) here, so one per event would be
   * O(pods²) per burst.
   */
  #scheduleEmit(): void {
    if (this.#emitScheduled) return;
    this.#emitScheduled = true;
    setImmediate(() => {
      if (!this.#emitScheduled || !this.#running) return;
      this.#emit();
    });
  }
}
