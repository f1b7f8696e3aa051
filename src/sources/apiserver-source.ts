import { setTimeout as sleep } from 'node:timers/promises';

import { CoreV1Api, Watch, type KubeConfig, type V1PodList } from '@kubernetes/client-node';

import { API_SERVER_SOURCE, PodOperation } from '../constants.js';
import type { Pod } from '../pod/types.js';
import type { PodUpdate, SetDelta, SourceLogger } from './types.js';

/** The shared source logger type (pino-compatible). */
export type ApiserverSourceLogger = SourceLogger;

/** What a watch stream delivers, as client-node's Watch passes it on. */
export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * The list and watch calls the source needs, so tests can replace the API server. `watch`
 * resolves once the request has been sent (with a handle to abort it) and calls `done`
 * exactly once when the stream ends, with the error if it failed.
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
  const api = kubeConfig.makeApiClient(CoreV1Api);
  const watcher = new Watch(kubeConfig);
  const fieldSelector = `spec.nodeName=${nodeName}`;
  return {
    list: () => api.listPodForAllNamespaces({ fieldSelector }),
    watch: (resourceVersion, onEvent, done) =>
      watcher.watch(
        '/api/v1/pods',
        { fieldSelector, resourceVersion, allowWatchBookmarks: true, timeoutSeconds },
        (type: string, object: unknown) => onEvent(type as WatchEventType, object),
        done,
      ),
  };
}

export interface ApiserverSourceOptions {
  /** Credentials of the node; used to build the list and watch calls. */
  kubeConfig?: KubeConfig;
  /** Replaces the list and watch built from kubeConfig (tests). One of the two is required. */
  listWatch?: PodListWatch;
  nodeName: string;
  /**
   * Receives `{ op: 'SET', source: 'api', pods }` with the full current set after every change
   * (watch events of one event-loop turn give one SET); SETs after watch events carry a
   * `delta` from the previous SET, so the merger need not look at the unchanged pods.
   */
  update: (update: PodUpdate) => void;
  logger?: ApiserverSourceLogger;
  /**
   * Waits between retries; resolves after `ms` or rejects when `signal` aborts. Tests inject
   * one that returns at once.
   */
  delay?: (ms: number, signal: AbortSignal) => Promise<void>;
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
  /** Starts listing and watching; a second call does nothing. */
  start(): void;
  /** Stops and closes the watch connection; resolves when the loop has ended. */
  stop(): Promise<void>;
  /** Counters of what the loop did so far. */
  stats(): ApiserverSourceStats;
}

const defaultDelay = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal });

const podKey = (pod: Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;

const statusCodeOf = (err: unknown): number | undefined => {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { statusCode?: unknown; code?: unknown };
  if (typeof e.statusCode === 'number') return e.statusCode;
  return typeof e.code === 'number' ? e.code : undefined;
};

const errorText = (err: unknown): string => {
  const code = statusCodeOf(err);
  const message = err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err);
  return code === undefined ? message : `HTTP ${code}: ${message}`;
};

/** How one watch request ended. */
type WatchEnd =
  | { kind: 'closed'; sawEvents: boolean } // the server ended the stream (its timeout, a shutdown)
  | { kind: 'gone' } // 410: our resourceVersion is too old; relist
  | { kind: 'silent' } // the watchdog gave up on it
  | { kind: 'error'; err: unknown }
  | { kind: 'stopped' };

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
 * every abandoned request is aborted so no connection is left open.
 */
export function createApiserverSource(options: ApiserverSourceOptions): ApiserverSource {
  return new ApiserverSourceImpl(options);
}

class ApiserverSourceImpl implements ApiserverSource {
  readonly #listWatch: PodListWatch;
  readonly #nodeName: string;
  readonly #update: (update: PodUpdate) => void;
  readonly #logger: ApiserverSourceLogger | undefined;
  readonly #delay: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #backoffInitialMs: number;
  readonly #backoffMaxMs: number;
  readonly #watchdogMs: number;
  readonly #stats: ApiserverSourceStats = { lists: 0, watches: 0, watchdogRestarts: 0, errors: 0 };

  #pods = new Map<string, Pod>();
  /** The `pods` of the last SET sent: the base of the next SET's delta. */
  #lastSent: Pod[] | undefined;
  /** Keys changed by watch events since the last SET, with the pod each had before. */
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
      throw new TypeError('createApiserverSource: pass kubeConfig (or listWatch)');
    }
    this.#nodeName = options.nodeName;
    this.#update = options.update;
    this.#logger = options.logger;
    this.#delay = options.delay ?? defaultDelay;
    this.#backoffInitialMs = options.backoffInitialMs ?? 500;
    this.#backoffMaxMs = options.backoffMaxMs ?? 30_000;
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

  /** Sends the store as a SET; after watch events (not after a list) it says what changed. */
  #emit(afterList = false): void {
    this.#emitScheduled = false;
    const pods = [...this.#pods.values()];
    let delta: SetDelta | undefined;
    if (!afterList && this.#lastSent !== undefined) {
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
    this.#update({ op: PodOperation.SET, source: API_SERVER_SOURCE, pods, ...(delta ? { delta } : {}) });
  }

  /**
   * Watch events that arrive in the same turn of the event loop (one chunk of the watch
   * stream: a burst of 1,000 mirror creations comes as a few chunks) are sent as one SET:
   * each SET costs O(pods) in the merge, so one per event would be O(pods²) per burst.
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
          this.#logger?.warn({ node: this.#nodeName, err: errorText(err) }, 'failed to list pods');
          await this.#backoff(failures);
          continue;
        }
      }
      const startedAt = Date.now();
      const end = await this.#watchOnce(() => {
        failures = 0;
      });
      switch (end.kind) {
        case 'stopped':
          return;
        case 'gone':
          this.#logger?.info({ node: this.#nodeName }, 'watch resourceVersion expired, relisting');
          this.#resourceVersion = '';
          continue;
        case 'silent':
          this.#stats.watchdogRestarts += 1;
          this.#logger?.warn({ node: this.#nodeName, silentMs: this.#watchdogMs }, 'watch silent too long, restarting');
          continue;
        case 'closed':
          // A stream the server closed at once (without events) is treated like an error, so a
          // misbehaving server cannot make us reconnect in a tight loop.
          if (end.sawEvents || Date.now() - startedAt >= 1000) continue;
          failures += 1;
          await this.#backoff(failures);
          continue;
        case 'error':
          this.#stats.errors += 1;
          failures += 1;
          this.#logger?.warn({ node: this.#nodeName, err: errorText(end.err) }, 'pod watch failed, retrying');
          await this.#backoff(failures);
          continue;
      }
    }
  }

  async #backoff(failures: number): Promise<void> {
    const ms = Math.min(this.#backoffMaxMs, this.#backoffInitialMs * 2 ** Math.min(failures - 1, 30));
    try {
      await this.#delay(ms, this.#stop.signal);
    } catch {
      // aborted by stop()
    }
  }

  async #list(): Promise<void> {
    this.#stats.lists += 1;
    let timer: NodeJS.Timeout | undefined;
    // client-node's list call cannot be cancelled; a list that hangs is abandoned (the
    // request ends when the server answers or the socket dies) and retried.
    const list = await Promise.race([
      this.#listWatch.list(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`list did not answer within ${this.#watchdogMs} ms`)), this.#watchdogMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (this.#stop.signal.aborted) return;
    this.#pods = new Map((list.items ?? []).map((pod) => [podKey(pod), pod]));
    this.#resourceVersion = list.metadata?.resourceVersion ?? '';
    this.#emit(true);
  }

  /** Runs one watch request from the current resourceVersion until it ends one way or another. */
  #watchOnce(onConnected: () => void): Promise<WatchEnd> {
    this.#stats.watches += 1;
    return new Promise<WatchEnd>((resolveEnd) => {
      let ended = false;
      let sawEvents = false;
      let handle: { abort(): void } | undefined;
      let lastActivity = Date.now();
      let watchdog: NodeJS.Timeout | undefined;

      const finish = (end: WatchEnd): void => {
        if (ended) return;
        ended = true;
        clearTimeout(watchdog);
        this.#endWatch = undefined;
        handle?.abort();
        resolveEnd(end);
      };
      this.#endWatch = finish;

      const arm = (ms: number): void => {
        watchdog = setTimeout(() => {
          const idle = Date.now() - lastActivity;
          if (idle >= this.#watchdogMs) finish({ kind: 'silent' });
          else arm(this.#watchdogMs - idle);
        }, ms);
      };
      arm(this.#watchdogMs);

      const onEvent = (type: WatchEventType, object: unknown): void => {
        if (ended) return;
        lastActivity = Date.now();
        sawEvents = true;
        if (type === 'ERROR') {
          const code = statusCodeOf(object);
          if (code === 410) finish({ kind: 'gone' });
          else finish({ kind: 'error', err: new Error(`watch ERROR event: ${describeStatus(object)}`) });
          return;
        }
        const pod = object as Pod;
        const rv = pod.metadata?.resourceVersion;
        if (rv !== undefined && rv !== '') this.#resourceVersion = rv;
        if (type !== 'DELETED' && type !== 'ADDED' && type !== 'MODIFIED') return; // BOOKMARK
        const key = podKey(pod);
        if (!this.#touched.has(key)) this.#touched.set(key, this.#pods.get(key));
        if (type === 'DELETED') this.#pods.delete(key);
        else this.#pods.set(key, pod);
        this.#scheduleEmit();
      };
      const done = (err: unknown): void => {
        if (ended) return;
        if (err === null || err === undefined) finish({ kind: 'closed', sawEvents });
        else if (statusCodeOf(err) === 410) finish({ kind: 'gone' });
        else finish({ kind: 'error', err });
      };

      this.#listWatch.watch(this.#resourceVersion, onEvent, done).then(
        (h) => {
          handle = h;
          // The request may have been given up (watchdog, stop) before it was sent: close it now.
          if (ended) h.abort();
          else onConnected();
        },
        (err: unknown) => done(err ?? new Error('watch failed')),
      );
    });
  }
}

function describeStatus(object: unknown): string {
  if (typeof object !== 'object' || object === null) return String(object);
  const s = object as { code?: unknown; reason?: unknown; message?: unknown };
  return [s.code, s.reason, s.message].filter((x) => x !== undefined).join(' ');
}
