// A list + watch of one kind of object that keeps, by name, which objects there are and which
// of them match a test, and resolves waits at the very event that makes a count true: the
// benchmarks time convergence from the watch (the moment the API server told), not by polling.
import { Watch, type KubeConfig } from '@kubernetes/client-node';

interface Named {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface WatchedCountOptions<T extends Named> {
  kc: KubeConfig;
  /** The collection's path, e.g. `/api/v1/nodes` or `/api/v1/namespaces/ns/pods`. */
  path: string;
  /** One page of the collection, now (its resourceVersion starts the watch). */
  list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>;
  /** Only objects that pass count at all (e.g. the benchmark's Nodes by name). */
  include?: (obj: T) => boolean;
  /** What `matching` counts (e.g. Ready, Running). */
  matches: (obj: T) => boolean;
}

interface Waiter {
  check: () => boolean;
  resolve: (at: number) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class WatchedCount<T extends Named> {
  readonly #o: WatchedCountOptions<T>;
  readonly #present = new Set<string>();
  readonly #matching = new Set<string>();
  /** The objects that do not match, for a failure message. */
  readonly #waiting = new Map<string, T>();
  #waiters: Waiter[] = [];
  #abort: { abort(): void } | undefined;
  #stopped = false;
  /** How often the watch ended and the collection was listed again. */
  relists = 0;

  constructor(options: WatchedCountOptions<T>) {
    this.#o = options;
  }

  get total(): number {
    return this.#present.size;
  }

  get matching(): number {
    return this.#matching.size;
  }

  async start(): Promise<void> {
    await this.#listAndWatch();
  }

  async #listAndWatch(): Promise<void> {
    const list = await this.#o.list();
    const seen = new Set<string>();
    for (const obj of list.items) {
      seen.add(keyOf(obj));
      this.#apply('MODIFIED', obj);
    }
    for (const key of [...this.#present]) if (!seen.has(key)) this.#remove(key);
    this.#check(performance.now());
    this.#abort = await new Watch(this.#o.kc).watch(
      this.#o.path,
      { allowWatchBookmarks: true, ...(list.metadata?.resourceVersion ? { resourceVersion: list.metadata.resourceVersion } : {}) },
      (type: string, obj: T) => {
        if (type === 'BOOKMARK') return;
        this.#apply(type, obj);
        this.#check(performance.now());
      },
      () => {
        // The server ended the watch (its timeout) or it failed: list again, as a reflector would.
        if (this.#stopped) return;
        this.relists++;
        const again = (): void => void this.#listAndWatch().catch(() => setTimeout(again, 500).unref());
        setTimeout(again, 100).unref();
      },
    );
  }

  #apply(type: string, obj: T): void {
    if (this.#o.include !== undefined && !this.#o.include(obj)) return;
    const key = keyOf(obj);
    if (type === 'DELETED') {
      this.#remove(key);
      return;
    }
    this.#present.add(key);
    if (this.#o.matches(obj)) {
      this.#matching.add(key);
      this.#waiting.delete(key);
    } else {
      this.#matching.delete(key);
      this.#waiting.set(key, obj);
    }
  }

  #remove(key: string): void {
    this.#present.delete(key);
    this.#matching.delete(key);
    this.#waiting.delete(key);
  }

  /** One object that does not match (its name and status), for a message; '' when there is none. */
  sample(): string {
    const first = this.#waiting.values().next();
    if (first.done === true) return '';
    const obj = first.value as T & { status?: unknown };
    return `${keyOf(obj)}: ${JSON.stringify(obj.status ?? {})}`;
  }

  #check(at: number): void {
    if (this.#waiters.length === 0) return;
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.check()) return true;
      clearTimeout(w.timer);
      w.resolve(at);
      return false;
    });
  }

  /** Resolves with performance.now() of the event that made `check` true; rejects after timeoutMs. */
  until(check: (c: { total: number; matching: number }) => boolean, what: string, timeoutMs: number): Promise<number> {
    const test = (): boolean => check({ total: this.total, matching: this.matching });
    if (test()) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        check: test,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters = this.#waiters.filter((x) => x !== w);
          const sample = this.sample();
          reject(new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what} (${this.matching} matching of ${this.total})${sample === '' ? '' : `; one that does not: ${sample}`}`));
        }, timeoutMs),
      };
      this.#waiters.push(w);
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#abort?.abort();
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.reject(new Error('watch stopped'));
    }
    this.#waiters = [];
  }
}

function keyOf(obj: Named): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
