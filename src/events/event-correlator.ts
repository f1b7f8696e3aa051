import { randomUUID } from 'node:crypto';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Clock } from '../time/clock.js';

/**
 * What client-go's event recorder does to every event before it is written (its
 * EventCorrelator), rebuilt on our clock:
 *
 * 1. Aggregation: events that differ only by message (same source, object, type and reason)
 *    are grouped; once `maxDistinctMessages` different messages were seen for a group within
 *    `aggregateWindowMs` of each other, further ones become one event whose message says it
 *    was combined, counted like a repeat.
 * 2. Observation: an event seen before (same source, object, type, reason and message) is
 *    not created again: the stored one gets `count + 1` and a new `lastTimestamp` (a PATCH).
 * 3. Spam filter: each source + object (+ type) has a token bucket, `spamBurst` events and
 *    then one per `1 / spamQPS` seconds; events beyond it are dropped.
 *
 * Every cache is an LRU of `cacheSize` keys, so a node with many objects keeps bounded memory.
 * Pure and synchronous: time comes from the clock, nothing is sent from here.
 */
export interface EventCorrelator {
  /**
   * The event to write and how: `create` a new Event, or `patch` the stored one named
   * `event.metadata.name` with `count`, `lastTimestamp` and `message`; `skip` when the spam
   * filter drops it. `event` is the recorder's draft, never changed.
   */
  correlate(event: CoreV1Event): CorrelateResult;
}

export type CorrelateResult = { readonly action: 'create' | 'patch'; readonly event: CoreV1Event } | { readonly action: 'skip' };

export interface EventCorrelatorOptions {
  clock: Clock;
  /** Keys remembered by each cache; 4096 as in client-go. */
  cacheSize?: number;
  /** Distinct messages per group before aggregation; 10 as in client-go. */
  maxDistinctMessages?: number;
  /** How long a group's messages are remembered after its last event; 10 minutes as in client-go. */
  aggregateWindowMs?: number;
  /** Events allowed at once per source and object; 25 as in client-go. */
  spamBurst?: number;
  /** Refill of that allowance per second; one every 5 minutes as in client-go. */
  spamQPS?: number;
}

/** The message prefix of an aggregated event (client-go's wording is an API users grep for). */
export const COMBINED_MESSAGE_PREFIX = '(combined from similar events): ';

/** A Map used as a least-recently-used cache: reads move a key to the end, the oldest goes first. */
class Lru<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();
  constructor(max: number) {
    this.#max = Math.max(1, max);
  }
  get(key: string): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }
  set(key: string, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value!);
  }
}

interface Observation {
  count: number;
  firstTimestamp: Date | undefined;
  name: string;
}

interface AggregateGroup {
  messages: Set<string>;
  last: number;
}

interface SpamBucket {
  tokens: number;
  last: number;
}

const SEP = '\u0000';

function objectKey(e: CoreV1Event): string[] {
  const o = e.involvedObject;
  return [e.source?.component ?? '', e.source?.host ?? '', o.kind ?? '', o.namespace ?? '', o.name ?? '', o.uid ?? '', o.apiVersion ?? ''];
}

/** One Event in the API: source, object (with field path), type, reason and message. */
function eventKey(e: CoreV1Event): string {
  const o = e.involvedObject;
  return [...objectKey(e), o.fieldPath ?? '', e.type ?? '', e.reason ?? '', e.message ?? ''].join(SEP);
}

/** Events grouped for aggregation: everything but the message. */
function groupKey(e: CoreV1Event): string {
  return [...objectKey(e), e.type ?? '', e.reason ?? '', e.reportingComponent ?? '', e.reportingInstance ?? ''].join(SEP);
}

/** What the spam filter limits: one source about one object, per type. */
function spamKey(e: CoreV1Event): string {
  return [...objectKey(e), e.type ?? ''].join(SEP);
}

export function createEventCorrelator(options: EventCorrelatorOptions): EventCorrelator {
  const { clock } = options;
  const size = options.cacheSize ?? 4096;
  const maxMessages = options.maxDistinctMessages ?? 10;
  const windowMs = options.aggregateWindowMs ?? 600_000;
  const burst = options.spamBurst ?? 25;
  const qps = options.spamQPS ?? 1 / 300;
  const groups = new Lru<AggregateGroup>(size);
  const observations = new Lru<Observation>(size);
  const buckets = new Lru<SpamBucket>(size);

  /** The event as aggregation leaves it, and the key it is observed under. */
  function aggregate(event: CoreV1Event, now: number): { event: CoreV1Event; key: string } {
    const gKey = groupKey(event);
    let group = groups.get(gKey);
    if (group === undefined || now - group.last > windowMs) group = { messages: new Set(), last: now };
    group.messages.add(event.message ?? '');
    group.last = now;
    groups.set(gKey, group);
    if (group.messages.size < maxMessages) return { event, key: eventKey(event) };
    // Full: keep the set at its size, and fold this event into the group's combined event.
    group.messages.delete(event.message ?? '');
    const at = clock.now();
    const combined: CoreV1Event = {
      ...event,
      metadata: { name: eventName(event.involvedObject.name ?? '', at), namespace: event.metadata.namespace },
      message: COMBINED_MESSAGE_PREFIX + (event.message ?? ''),
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
    };
    return { event: combined, key: gKey };
  }

  function observe(event: CoreV1Event, key: string): CorrelateResult & { action: 'create' | 'patch' } {
    const seen = observations.get(key);
    if (seen === undefined || seen.count === 0) {
      observations.set(key, { count: event.count ?? 1, firstTimestamp: event.firstTimestamp, name: event.metadata.name ?? '' });
      return { action: 'create', event };
    }
    const repeated: CoreV1Event = {
      ...event,
      metadata: { ...event.metadata, name: seen.name },
      count: seen.count + 1,
      ...(seen.firstTimestamp !== undefined ? { firstTimestamp: seen.firstTimestamp } : {}),
    };
    observations.set(key, { count: seen.count + 1, firstTimestamp: repeated.firstTimestamp, name: seen.name });
    return { action: 'patch', event: repeated };
  }

  function allowed(event: CoreV1Event, now: number): boolean {
    const key = spamKey(event);
    const bucket = buckets.get(key) ?? { tokens: burst, last: now };
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.last) / 1000) * qps);
    bucket.last = now;
    const ok = bucket.tokens >= 1;
    if (ok) bucket.tokens -= 1;
    buckets.set(key, bucket);
    return ok;
  }

  return {
    correlate(draft) {
      const now = clock.monotonic();
      const { event, key } = aggregate(draft, now);
      const observed = observe(event, key);
      return allowed(observed.event, now) ? observed : { action: 'skip' };
    },
  };
}

/**
 * client-go's event name: the object's name, a dot and the time in nanoseconds, in hex; a
 * random UUID when that would be too long for an object name.
 */
export function eventName(objectName: string, at: Date): string {
  const nanos = BigInt(at.getTime()) * 1_000_000n + BigInt(nanoCounter++ % 1_000_000);
  const name = `${objectName}.${nanos.toString(16)}`;
  return name.length <= 253 ? name : randomUUID();
}

// Two events made in the same millisecond must not share a name (client-go has real
// nanoseconds); a counter stands in for the digits below the millisecond.
let nanoCounter = 0;
