import { ApiException, CoreV1Api, Watch, type KubeConfig, type V1PodList } from '@kubernetes/client-node';

import { API_SERVER_SOURCE, PodOperation } from '../constants.js';
import { kpError } from '../errors.js';
import { apiErrorInfo, apiStatusOf } from '../kube/api-error.js';
import { isMirrorPod } from '../pod/classify.js';
import type { Pod } from '../pod/types.js';
import { backoffDelay } from '../time/backoff.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { trimmedListWatch } from './trimmed-list-watch.js';
import { noopLogger, type PodUpdate, type SetDelta, type SourceLogger } from './types.js';

/** What a watch stream delivers, as client-node's Watch passes it on. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * The list and watch calls the source needs, so tests can replace the API server. `watch`
 * resolves once the request has been sent (with a handle to abort it) and calls `done`
 * exactly once when the stream ends, with the error if it failed. An HTTP failure must be
 * readable by src/kube/api-error.ts (an ApiException, or an object with a numeric `code`):
 * that is how a 410 Gone is told from other failures.
 */
export interface PodListWatch {
  list(): Promise<V1PodList>;
  watch(
    resourceVersion: string,
    onEvent: (type: WatchEventType, object: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<{ abort(): void }>;
}

/**
 * List and watch of the pods bound to `nodeName` in all namespaces
 * (`fieldSelector=spec.nodeName=<node>`), with a server-side watch timeout and bookmarks.
 */
export function kubePodListWatch(kubeConfig: KubeConfig, nodeName: string, timeoutSeconds: number): PodListWatch {
  return kubePodsListWatch(kubeConfig, `spec.nodeName=${nodeName}`, timeoutSeconds);
}

/**
 * List and watch of the pods a field selector picks in all namespaces: the list through `core`
 * (by default a client of its own; the fleet passes its shared one), the watch on one
 * long-lived connection, with a server-side timeout and bookmarks.
 */
export function kubePodsListWatch(
  kubeConfig: KubeConfig,
  fieldSelector: string,
  timeoutSeconds: number,
  core: CoreV1Api = kubeConfig.makeApiClient(CoreV1Api),
): PodListWatch {
  const watcher = new Watch(kubeConfig);
  // Mirror pods are kept without their managedFields; other pods stay whole (/pods serves them).
  return trimmedListWatch({
    list: () => core.listPodForAllNamespaces({ fieldSelector }),
    watch: (resourceVersion, onEvent, done) =>
      watcher.watch(
        '/api/v1/pods',
        { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        (type: string, object: unknown) => onEvent(type as WatchEventType, object),
        (err: unknown) => done(asApiException(err)),
      ),
  }, isMirrorPod);
}

/**
 * client-node's Watch reports a refused watch request (a 410 among others) as a plain Error
 * with `statusCode`, where its API calls throw an ApiException: turned into the latter here, so
 * that src/kube/api-error.ts reads both alike.
 */
function asApiException(err: unknown): unknown {
  const statusCode = (err as { statusCode?: unknown } | null | undefined)?.statusCode;
  if (typeof statusCode !== 'number') return err;
  return new ApiException(statusCode, err instanceof Error ? err.message : String(err), undefined, {});
}

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
   * A watch (or list) that has delivered nothing for this long is abandoned and restarted:
   * it guards against connections that die without an error. Default: the watch timeout
   * plus 60 s (bookmarks arrive about once a minute, and the server closes the watch at its
   * timeout, so a healthy watch is never silent that long).
   */
  watchdogMs?: number;
}

export interface ApiserverSourceStats {
  lists: number;
  watches: number;
  watchdogRestarts: number;
  errors: number;
}

/** The `api` pod source: every pod bound to this node, as full SETs. */
export interface ApiserverSource {
  /** Starts listing and watching; a second call does nothing. After stop(), starts again. */
  start(): void;
  /** Stops and closes the watch connection; resolves when the loop has ended. */
  stop(): Promise<void>;
  /** Counters of what the loop did so far. */
  stats(): ApiserverSourceStats;
}

const podKey = (pod: Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

/** Two copies of the same version of an API object: same UID and resourceVersion. */
const sameVersion = (a: Pod, b: Pod): boolean =>
  a.metadata?.uid === b.metadata?.uid && a.metadata?.resourceVersion !== undefined && a.metadata.resourceVersion !== '' && a.metadata.resourceVersion === b.metadata?.resourceVersion;

/** A failed call as text for an error message: the HTTP status and the Status's own message, never the body. */
function describeFailure(err: unknown): string {
  const { code, message } = apiStatusOf(err);
  return code === undefined || message === `HTTP ${code}` ? message : `HTTP ${code}: ${message}`;
}

/** A Status object from a watch ERROR event, as text. */
function describeStatus(object: unknown): string {
  if (typeof object !== 'object' || object === null) return String(object);
  const s = object as { code?: unknown; reason?: unknown; message?: unknown };
  return [s.code, s.reason, s.message].filter((x) => x !== undefined).join(' ');
}

/** How one watch request ended. */
type WatchEnd =
  | { kind: 'closed'; sawEvents: boolean } // the server ended the stream (its timeout, a shutdown)
  | { kind: 'gone' } // 410: our resourceVersion is too old; relist
  | { kind: 'silent' } // the watchdog gave up on it
  | { kind: 'error'; err: Error }
  | { kind: 'stopped' };

/** A stream the server closes sooner than this without any event counts as a failure. */
const MIN_HEALTHY_WATCH_MS = 1000;

/**
 * Creates the API-server source. Like the kubelet's, it keeps a store keyed `<ns>/<name>`
 * (so equal names in two namespaces are two pods) and after the list and after every watch
 * event sends the whole store as one SET; the pods are passed on unmodified.
 *
 * It runs its own list-then-watch loop over client-node's `Watch` rather than `ListWatch`,
 * which in client-node 1.x stops for good after most errors, cannot pass `timeoutSeconds`,
 * and reports a relist as one event per pod. Here: the watch restarts after any error with
 * exponential backoff; a 410 Gone (expired resourceVersion) relists at once; each watch
 * has a server-side timeout; a watchdog abandons a watch that stays silent too long; and
 * every abandoned request is aborted so no connection is left open. A relist keeps the
 * objects of pods whose resourceVersion did not change, so its SET names only what changed.
 */
export function createApiserverSource(options: ApiserverSourceOptions): ApiserverSource {
  return new ApiserverSourceImpl(options);
}

class ApiserverSourceImpl implements ApiserverSource {
  readonly #listWatch: PodListWatch;
  readonly #nodeName: string;
  readonly #onUpdate: (update: PodUpdate) => void;
  readonly #logger: SourceLogger;
  readonly #clock: Clock;
  readonly #backoff: { readonly initialMs: number; readonly maxMs: number };
  readonly #watchdogMs: number;
  readonly #stats: ApiserverSourceStats = { lists: 0, watches: 0, watchdogRestarts: 0, errors: 0 };

  #pods = new Map<string, Pod>();
  /** The `pods` of the last SET sent: the base of the next SET's delta. */
  #lastSent: Pod[] | undefined;
  /** Keys changed since the last SET, with the pod each had in it. */
  #touched = new Map<string, Pod | undefined>();
  #emitScheduled = false;
  #resourceVersion = '';
  #loop: Promise<void> | undefined;
  #stop = new AbortController();
  /** Ends the watch in progress (aborts its request and settles its wait). */
  #endWatch: ((end: WatchEnd) => void) | undefined;

  constructor(options: ApiserverSourceOptions) {
    const timeoutSeconds = options.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    if (options.listWatch !== undefined) {
      this.#listWatch = options.listWatch;
    } else if (options.kubeConfig !== undefined) {
      this.#listWatch = kubePodListWatch(options.kubeConfig, options.nodeName, timeoutSeconds);
    } else {
      throw kpError('KP_ERR_SOURCE_OPTIONS', ['kubeConfig', 'neither kubeConfig nor listWatch']);
    }
    this.#nodeName = options.nodeName;
    this.#onUpdate = options.onUpdate;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#backoff = { initialMs: options.backoffInitialMs ?? 500, maxMs: options.backoffMaxMs ?? 30_000 };
    this.#watchdogMs = options.watchdogMs ?? (timeoutSeconds + 60) * 1000;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#stop = new AbortController();
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    const loop = this.#loop;
    if (loop === undefined) return;
    this.#stop.abort();
    this.#endWatch?.({ kind: 'stopped' });
    await loop;
    this.#loop = undefined;
  }

  stats(): ApiserverSourceStats {
    return { ...this.#stats };
  }

  /** Sends the store as a SET, with what changed since the previous SET, if there was one. */
  #emit(): void {
    this.#emitScheduled = false;
    const pods = [...this.#pods.values()];
    let delta: SetDelta | undefined;
    if (this.#lastSent !== undefined) {
      const changed: Pod[] = [];
      const removed: Pod[] = [];
      for (const [key, before] of this.#touched) {
        const after = this.#pods.get(key);
        if (after !== undefined && after !== before) changed.push(after);
        if (before !== undefined && before.metadata?.uid !== after?.metadata?.uid) removed.push(before);
      }
      delta = { base: this.#lastSent, changed, removed };
    }
    this.#touched.clear();
    this.#lastSent = pods;
    this.#onUpdate({ op: PodOperation.SET, source: API_SERVER_SOURCE, pods, ...(delta ? { delta } : {}) });
  }

  /** Records that `key` is about to change, with the pod it had in the last SET. */
  #touch(key: string): void {
    if (!this.#touched.has(key)) this.#touched.set(key, this.#pods.get(key));
  }

  /**
   * Watch events that arrive in the same turn of the event loop (one chunk of the watch
   * stream: a burst of 1,000 mirror creations comes as a few chunks) are sent as one SET:
   * each SET costs O(pods) here, so one per event would be O(pods²) per burst.
   */
  #scheduleEmit(): void {
    if (this.#emitScheduled) return;
    this.#emitScheduled = true;
    setImmediate(() => {
      if (!this.#emitScheduled || this.#stop.signal.aborted) return;
      this.#emit();
    });
  }

  async #run(): Promise<void> {
    const stopSignal = this.#stop.signal;
    let failures = 0;
    while (!stopSignal.aborted) {
      if (this.#resourceVersion === '') {
        try {
          await this.#list();
          failures = 0;
        } catch (err) {
          if (stopSignal.aborted) break;
          this.#stats.errors += 1;
          failures += 1;
          this.#logger.warn({ node: this.#nodeName, httpStatus: apiErrorInfo(err).code, err: kpError('KP_ERR_SOURCE_API_LIST', [this.#nodeName, describeFailure(err)]) }, 'failed to list pods');
          await this.#pause(failures);
          continue;
        }
      }
      const startedAt = this.#clock.monotonic();
      const end = await this.#watchOnce(() => {
        failures = 0;
      });
      switch (end.kind) {
        case 'stopped':
          return;
        case 'gone':
          this.#logger.info({ node: this.#nodeName }, 'watch resourceVersion expired, relisting');
          this.#resourceVersion = '';
          continue;
        case 'silent':
          this.#stats.watchdogRestarts += 1;
          this.#logger.warn({ node: this.#nodeName, silentMs: this.#watchdogMs }, 'watch silent too long, restarting');
          continue;
        case 'closed':
          // A stream the server closed at once (without events) is treated like an error, so a
          // misbehaving server cannot make us reconnect in a tight loop.
          if (end.sawEvents || this.#clock.monotonic() - startedAt >= MIN_HEALTHY_WATCH_MS) continue;
          failures += 1;
          await this.#pause(failures);
          continue;
        case 'error':
          this.#stats.errors += 1;
          failures += 1;
          this.#logger.warn({ node: this.#nodeName, err: end.err }, 'pod watch failed, retrying');
          await this.#pause(failures);
          continue;
      }
    }
  }

  /** Waits before the retry that follows `failures` consecutive failures; stop() cuts it short. */
  async #pause(failures: number): Promise<void> {
    try {
      await this.#clock.sleep(backoffDelay(failures, this.#backoff), this.#stop.signal);
    } catch {
      // aborted by stop()
    }
  }

  async #list(): Promise<void> {
    this.#stats.lists += 1;
    let timer: ClockTimer | undefined;
    // client-node's list call cannot be cancelled; a list that hangs is abandoned (the
    // request ends when the server answers or the socket dies) and retried.
    const list = await Promise.race([
      this.#listWatch.list(),
      new Promise<never>((_, reject) => {
        timer = this.#clock.setTimeout(
          () => reject(kpError('KP_ERR_SOURCE_API_LIST', [this.#nodeName, `no answer within ${this.#watchdogMs} ms`])),
          this.#watchdogMs,
        );
      }),
    ]).finally(() => this.#clock.clearTimeout(timer));
    if (this.#stop.signal.aborted) return;
    const previous = this.#pods;
    const next = new Map<string, Pod>();
    for (const item of list.items ?? []) {
      const key = podKey(item);
      const known = previous.get(key);
      // The same version of a pod we already hold: keep that object, so the SET's delta
      // leaves it out and the merger does not look at it.
      next.set(key, known !== undefined && sameVersion(known, item) ? known : item);
      this.#touch(key);
    }
    for (const key of previous.keys()) if (!next.has(key)) this.#touch(key);
    this.#pods = next;
    this.#resourceVersion = list.metadata?.resourceVersion ?? '';
    this.#emit();
  }

  /** Runs one watch request from the current resourceVersion until it ends one way or another. */
  #watchOnce(onConnected: () => void): Promise<WatchEnd> {
    this.#stats.watches += 1;
    const clock = this.#clock;
    return new Promise<WatchEnd>((resolveEnd) => {
      let ended = false;
      let sawEvents = false;
      let handle: { abort(): void } | undefined;
      let lastActivity = clock.monotonic();
      let watchdog: ClockTimer | undefined;

      const finish = (end: WatchEnd): void => {
        if (ended) return;
        ended = true;
        clock.clearTimeout(watchdog);
        this.#endWatch = undefined;
        handle?.abort();
        resolveEnd(end);
      };
      this.#endWatch = finish;

      const arm = (ms: number): void => {
        watchdog = clock.setTimeout(() => {
          const idle = clock.monotonic() - lastActivity;
          if (idle >= this.#watchdogMs) finish({ kind: 'silent' });
          else arm(this.#watchdogMs - idle);
        }, ms);
      };
      arm(this.#watchdogMs);

      const onEvent = (type: WatchEventType, object: unknown): void => {
        if (ended) return;
        lastActivity = clock.monotonic();
        sawEvents = true;
        if (type === 'ERROR') {
          if (apiErrorInfo(object).code === 410) finish({ kind: 'gone' });
          else finish({ kind: 'error', err: kpError('KP_ERR_SOURCE_API_WATCH', [this.#nodeName, `ERROR event: ${describeStatus(object)}`]) });
          return;
        }
        const pod = object as Pod;
        const rv = pod.metadata?.resourceVersion;
        if (rv !== undefined && rv !== '') this.#resourceVersion = rv;
        if (type !== 'DELETED' && type !== 'ADDED' && type !== 'MODIFIED') return; // BOOKMARK
        const key = podKey(pod);
        this.#touch(key);
        if (type === 'DELETED') this.#pods.delete(key);
        else this.#pods.set(key, pod);
        this.#scheduleEmit();
      };
      const done = (err: unknown): void => {
        if (ended) return;
        if (err === null || err === undefined) finish({ kind: 'closed', sawEvents });
        else if (apiErrorInfo(err).code === 410) finish({ kind: 'gone' });
        else finish({ kind: 'error', err: kpError('KP_ERR_SOURCE_API_WATCH', [this.#nodeName, describeFailure(err)]) });
      };

      this.#listWatch.watch(this.#resourceVersion, onEvent, done).then(
        (h) => {
          handle = h;
          // The request may have been given up (watchdog, stop) before it was sent: close it now.
          if (ended) h.abort();
          else onConnected();
        },
        (err: unknown) => done(err ?? 'the watch request failed without an error'),
      );
    });
  }
}
