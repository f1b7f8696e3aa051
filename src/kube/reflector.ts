import { noopLogger, type Logger } from '../logger.js';
import { backoffDelay, type BackoffPolicy } from '../time/backoff.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { apiErrorInfo, apiStatusOf } from './api-error.js';
import type { KubeObject, ListWatch } from './list-watch.js';
import { randomWatchTimeoutSeconds } from './watch-timeout.js';

/** The watch events a consumer sees: bookmarks and errors stay inside the reflector. */
export type ObjectEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** How a reflector's failures read in the log: its consumer's words and error codes. */
export interface ReflectorWording {
  /** Fields on every log line (e.g. `{ node }`). */
  readonly logFields: Readonly<Record<string, unknown>>;
  /** The message of a failed list, and the error it logs, given the failure as text. */
  readonly listFailed: string;
  listError(reason: string): Error;
  /** The same for a failed watch. */
  readonly watchFailed: string;
  watchError(reason: string): Error;
}

export interface ReflectorOptions<T extends KubeObject> {
  listWatch: ListWatch<T>;
  /**
   * Every object of a (re)list, in the list's order: it replaces all that came before. When it
   * returns a promise, the watch starts once that settles (a large relist handed out in slices).
   */
  onList: (items: T[], resourceVersion: string) => void | Promise<void>;
  /** One change the watch saw since. */
  onEvent: (type: ObjectEventType, object: T) => void;
  wording: ReflectorWording;
  logger?: Logger;
  /** Retry pauses, the watchdog and the list timeout; the real clock by default. */
  clock?: Clock;
  /** First retry pause after an error; doubles per consecutive error. Default 500 ms. */
  backoffInitialMs?: number;
  /** Longest retry pause. Default 30 s. */
  backoffMaxMs?: number;
  /** The server-side timeout its list-watch asks for; random in [300, 600) s by default. Sets the watchdog's default. */
  watchTimeoutSeconds?: number;
  /**
   * A watch (or list) that has delivered nothing for this long is abandoned and restarted:
   * it guards against connections that die without an error. Default: the watch timeout
   * plus 60 s (bookmarks arrive about once a minute, and the server closes the watch at its
   * timeout, so a healthy watch is never silent that long).
   */
  watchdogMs?: number;
}

export interface ReflectorStats {
  lists: number;
  watches: number;
  watchdogRestarts: number;
  errors: number;
}

/** A list-then-watch loop over one kind of object. */
export interface Reflector {
  /** Starts listing and watching; a second call does nothing. After stop(), watches again from where it was. */
  start(): void;
  /** Stops and closes the watch connection; resolves when the loop has ended. */
  stop(): Promise<void>;
  /** Counters of what the loop did so far. */
  stats(): ReflectorStats;
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

/**
 * Creates a reflector, as client-go's: it lists, hands the whole list over, then watches from
 * the list's resourceVersion and hands over each change. It runs over client-node's `Watch`
 * rather than its `ListWatch`, which in client-node 1.x stops for good after most errors, cannot
 * pass `timeoutSeconds`, and reports a relist as one event per object. Here: the watch restarts
 * after any error with exponential backoff; a 410 Gone (expired resourceVersion) relists at
 * once; a watchdog abandons a watch (or list) that stays silent too long; and every abandoned
 * request is aborted so no connection is left open.
 */
export function createReflector<T extends KubeObject>(options: ReflectorOptions<T>): Reflector {
  return new ReflectorImpl(options);
}

class ReflectorImpl<T extends KubeObject> implements Reflector {
  readonly #options: ReflectorOptions<T>;
  readonly #wording: ReflectorWording;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #backoff: BackoffPolicy;
  readonly #watchdogMs: number;
  readonly #stats: ReflectorStats = { lists: 0, watches: 0, watchdogRestarts: 0, errors: 0 };

  #resourceVersion = '';
  #loop: Promise<void> | undefined;
  // A flag and a waker rather than an AbortController: every node of a fleet has a reflector,
  // and an AbortSignal is an EventTarget of about 700 bytes with a hidden class of its own.
  #stopped = false;
  /** Ends the backoff pause in progress. */
  #wake: (() => void) | undefined;
  /** Ends the watch in progress (aborts its request and settles its wait). */
  #endWatch: ((end: WatchEnd) => void) | undefined;

  constructor(options: ReflectorOptions<T>) {
    this.#options = options;
    this.#wording = options.wording;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#backoff = { initialMs: options.backoffInitialMs ?? 500, maxMs: options.backoffMaxMs ?? 30_000 };
    this.#watchdogMs = options.watchdogMs ?? ((options.watchTimeoutSeconds ?? randomWatchTimeoutSeconds()) + 60) * 1000;
  }

  start(): void {
    if (this.#loop !== undefined) return;
    this.#stopped = false;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    const loop = this.#loop;
    if (loop === undefined) return;
    this.#stopped = true;
    this.#wake?.();
    this.#endWatch?.({ kind: 'stopped' });
    await loop;
    this.#loop = undefined;
  }

  stats(): ReflectorStats {
    return { ...this.#stats };
  }

  async #run(): Promise<void> {
    const log = this.#wording.logFields;
    let failures = 0;
    while (!this.#stopped) {
      if (this.#resourceVersion === '') {
        try {
          await this.#list();
          failures = 0;
        } catch (err) {
          if (this.#stopped) break;
          this.#stats.errors += 1;
          failures += 1;
          this.#logger.warn({ ...log, httpStatus: apiErrorInfo(err).code, err: this.#wording.listError(describeFailure(err)) }, this.#wording.listFailed);
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
          this.#logger.info({ ...log }, 'watch resourceVersion expired, relisting');
          this.#resourceVersion = '';
          continue;
        case 'silent':
          this.#stats.watchdogRestarts += 1;
          this.#logger.warn({ ...log, silentMs: this.#watchdogMs }, 'watch silent too long, restarting');
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
          this.#logger.warn({ ...log, err: end.err }, this.#wording.watchFailed);
          await this.#pause(failures);
          continue;
      }
    }
  }

  /** Waits before the retry that follows `failures` consecutive failures; stop() cuts it short. */
  #pause(failures: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, backoffDelay(failures, this.#backoff));
      this.#wake = () => {
        this.#wake = undefined;
        this.#clock.clearTimeout(timer);
        resolve();
      };
    });
  }

  async #list(): Promise<void> {
    this.#stats.lists += 1;
    let timer: ClockTimer | undefined;
    // client-node's list call cannot be cancelled; a list that hangs is abandoned (the
    // request ends when the server answers or the socket dies) and retried.
    const list = await Promise.race([
      this.#options.listWatch.list(),
      new Promise<never>((_, reject) => {
        timer = this.#clock.setTimeout(() => reject(this.#wording.listError(`no answer within ${this.#watchdogMs} ms`)), this.#watchdogMs);
      }),
    ]).finally(() => this.#clock.clearTimeout(timer));
    if (this.#stopped) return;
    this.#resourceVersion = list.metadata?.resourceVersion ?? '';
    await this.#options.onList(list.items ?? [], this.#resourceVersion);
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

      const onEvent = (type: string, object: unknown): void => {
        if (ended) return;
        lastActivity = clock.monotonic();
        sawEvents = true;
        if (type === 'ERROR') {
          if (apiErrorInfo(object).code === 410) finish({ kind: 'gone' });
          else finish({ kind: 'error', err: this.#wording.watchError(`ERROR event: ${describeStatus(object)}`) });
          return;
        }
        // The one place an object off the wire becomes a T: past ERROR, the list-watch's
        // contract is that it is one (a bookmark: one with only its resourceVersion).
        const obj = object as T;
        const rv = obj.metadata?.resourceVersion;
        if (rv !== undefined && rv !== '') this.#resourceVersion = rv;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.#options.onEvent(type, obj);
      };
      const done = (err: unknown): void => {
        if (ended) return;
        if (err === null || err === undefined) finish({ kind: 'closed', sawEvents });
        else if (apiErrorInfo(err).code === 410) finish({ kind: 'gone' });
        else finish({ kind: 'error', err: this.#wording.watchError(describeFailure(err)) });
      };

      this.#options.listWatch.watch(this.#resourceVersion, onEvent, done).then(
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
