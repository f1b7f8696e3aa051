import type { CoreV1Event, V1ObjectReference } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '../kube/request-options.js';
import type { CoreV1Api } from '../kube/typed-apis.js';
import { isAlreadyExists, isNotFound } from '../kube/api-error.js';
import { logApiFailure } from '../kube/log-api-failure.js';
import { noopLogger, type Logger } from '../logger.js';
import { realClock, type Clock } from '../time/clock.js';
import { createEventCorrelator, eventName, type EventCorrelatorOptions } from './event-correlator.js';

export type EventType = 'Normal' | 'Warning';

/** The object an event is about, as `kubectl describe` looks it up (see node-events.ts). */
export interface EventObjectRef {
  readonly kind: 'Node' | 'Pod';
  readonly name: string;
  /** Pods only; a Node's events go to the `default` namespace, as the kubelet's do. */
  readonly namespace?: string;
  readonly uid: string;
  /** A part of the object, as the kubelet names a pod's container: `spec.containers{web}`. */
  readonly fieldPath?: string;
  /** The object's version the event was about (the kubelet's references to API pods carry it). */
  readonly resourceVersion?: string;
}

/**
 * Records Kubernetes Events (core/v1) as the kubelet's recorder does: source component
 * `kubelet` and host = the node name, correlated like client-go (aggregation, counts, spam
 * filter: event-correlator.ts), written one at a time in the background.
 *
 * `event()` never blocks and never throws: it queues (up to `maxQueued` events, the rest are
 * dropped, as client-go's broadcaster drops them) and returns. A write the API server refuses,
 * or that cannot reach it, is dropped, never retried: the first failure is logged as a warning,
 * further ones silently, until a write succeeds again (then one line says how many were
 * dropped). Repeats of an event PATCH its count; a repeat whose Event is gone (expired after the
 * API server's event TTL) is created again.
 */
export interface EventRecorder {
  event(object: EventObjectRef, type: EventType, reason: string, message: string): void;
  /** Resolves when nothing is queued or being written (tests, shutdown). */
  idle(): Promise<void>;
  /** Drops what is queued; resolves once the write in flight ended. Later events are ignored. */
  stop(): Promise<void>;
}

/** What the recorder needs of the API: a client whose requests go through the event rate limit. */
export type EventApi = Pick<CoreV1Api, 'createNamespacedEvent' | 'patchNamespacedEvent'>;

export type EventWriteResult = 'created' | 'patched' | 'spam-filtered' | 'dropped';

export interface EventRecorderOptions {
  api: EventApi;
  /** The `source.host` and `reportingInstance` of every event. */
  nodeName: string;
  /** Event timestamps and the correlator's windows; the real clock by default. */
  clock?: Clock;
  logger?: Logger;
  /** Events waiting to be written beyond which new ones are dropped; 1000 as in client-go. */
  maxQueued?: number;
  /** The correlator's limits (client-go's by default). */
  correlation?: Omit<EventCorrelatorOptions, 'clock'>;
  /** Called once per event with what became of it (metrics, tests). */
  onResult?: (result: EventWriteResult, reason: string) => void;
  /**
   * True while this node's Node is known to be deleted: events about it are dropped, also those
   * queued before (an Event on a Node that no longer exists helps nobody). Never by default.
   */
  nodeGone?: () => boolean;
}

/** The kubelet's event source component. */
export const EVENT_SOURCE_COMPONENT = 'kubelet';
/** Longer messages are cut (the events.k8s.io limit for a note). */
const MAX_MESSAGE_LENGTH = 1024;

/** An event recorder that records nothing: standalone agents and `--events=false`. */
export const noopEventRecorder: EventRecorder = {
  event: () => {},
  idle: () => Promise.resolve(),
  stop: () => Promise.resolve(),
};

export function createEventRecorder(options: EventRecorderOptions): EventRecorder {
  const { api, nodeName, onResult } = options;
  const clock = options.clock ?? realClock;
  const logger = options.logger ?? noopLogger;
  const maxQueued = options.maxQueued ?? 1000;
  const correlator = createEventCorrelator({ ...options.correlation, clock });
  const queue: CoreV1Event[] = [];
  let draining: Promise<void> | undefined;
  let stopped = false;
  let overflowing = false;
  /** Events dropped since the first failed write of an outage; undefined while writes succeed. */
  let droppedSinceFailure: number | undefined;

  function makeEvent(object: EventObjectRef, type: EventType, reason: string, message: string): CoreV1Event {
    const at = clock.now();
    const involvedObject: V1ObjectReference =
      object.kind === 'Pod'
        ? { kind: 'Pod', apiVersion: 'v1', namespace: object.namespace ?? '', name: object.name, uid: object.uid }
        : { kind: object.kind, name: object.name, uid: object.uid };
    if (object.resourceVersion !== undefined) involvedObject.resourceVersion = object.resourceVersion;
    if (object.fieldPath !== undefined) involvedObject.fieldPath = object.fieldPath;
    return {
      metadata: { name: eventName(object.name, at), namespace: object.namespace || 'default' },
      involvedObject,
      reason,
      message: message.length > MAX_MESSAGE_LENGTH ? `${message.slice(0, MAX_MESSAGE_LENGTH - 3)}...` : message,
      type,
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: EVENT_SOURCE_COMPONENT, host: nodeName },
      reportingComponent: EVENT_SOURCE_COMPONENT,
      reportingInstance: nodeName,
    };
  }

  async function write(action: 'create' | 'patch', event: CoreV1Event): Promise<EventWriteResult> {
    const namespace = event.metadata.namespace ?? 'default';
    if (action === 'patch') {
      try {
        await api.patchNamespacedEvent(
          {
            name: event.metadata.name ?? '',
            namespace,
            body: { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message },
          },
          setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
        );
        return 'patched';
      } catch (err) {
        // Gone (expired, or its first write was dropped): write it whole again.
        if (!isNotFound(err)) throw err;
      }
    }
    await api.createNamespacedEvent({ namespace, body: event });
    return 'created';
  }

  function failed(event: CoreV1Event, err: unknown): void {
    if (isAlreadyExists(err)) {
      // The name is taken by the same event written before (a retried request): nothing lost.
      logger.debug({ reason: event.reason, object: event.involvedObject.name }, 'event already written');
      return;
    }
    if (droppedSinceFailure === undefined) {
      droppedSinceFailure = 0;
      logApiFailure(logger, err, {
        code: 'KP_ERR_EVENT_WRITE',
        subject: `${event.involvedObject.kind ?? ''}/${event.involvedObject.name ?? ''}`,
        message: 'event write failed; dropping events until a write succeeds',
        fields: { eventReason: event.reason, kind: event.involvedObject.kind, object: event.involvedObject.name },
      });
    }
    droppedSinceFailure += 1;
  }

  async function drain(): Promise<void> {
    for (let draft = queue.shift(); draft !== undefined && !stopped; draft = queue.shift()) {
      if (draft.involvedObject.kind === 'Node' && draft.involvedObject.name === nodeName && options.nodeGone?.() === true) {
        onResult?.('dropped', draft.reason ?? '');
        continue;
      }
      const result = correlator.correlate(draft);
      if (result.action === 'skip') {
        onResult?.('spam-filtered', draft.reason ?? '');
        continue;
      }
      let outcome: EventWriteResult;
      try {
        outcome = await write(result.action, result.event);
        if (droppedSinceFailure !== undefined) {
          logger.info({ dropped: droppedSinceFailure }, 'event writes succeed again');
          droppedSinceFailure = undefined;
        }
      } catch (err) {
        failed(result.event, err);
        outcome = 'dropped';
      }
      onResult?.(outcome, draft.reason ?? '');
    }
    overflowing = false;
  }

  function kick(): void {
    draining ??= drain()
      .catch((err: unknown) => logger.error({ err }, 'event recorder failed'))
      .finally(() => {
        draining = undefined;
        if (queue.length > 0 && !stopped) kick();
      });
  }

  return {
    event(object, type, reason, message) {
      if (stopped) return;
      const event = makeEvent(object, type, reason, message);
      logger.debug({ kind: object.kind, object: object.name, namespace: object.namespace, type, reason, message: event.message }, 'event occurred');
      if (queue.length >= maxQueued) {
        if (!overflowing) logger.warn({ maxQueued, reason }, 'too many queued events, dropping events');
        overflowing = true;
        onResult?.('dropped', reason);
        return;
      }
      queue.push(event);
      kick();
    },
    async idle() {
      while (draining !== undefined) await draining;
    },
    async stop() {
      stopped = true;
      queue.length = 0;
      await draining;
    },
  };
}

/**
 * A recorder made at its first event: a fleet node that records none (no static pods, nothing
 * failing) holds none of a recorder's state, its correlator's caches included.
 */
export function lazyEventRecorder(make: () => EventRecorder): EventRecorder {
  return new LazyEventRecorder(make);
}

class LazyEventRecorder implements EventRecorder {
  #made: EventRecorder | undefined;
  #stopped = false;
  constructor(private readonly make: () => EventRecorder) {}

  event(object: EventObjectRef, type: EventType, reason: string, message: string): void {
    if (this.#stopped) return;
    (this.#made ??= this.make()).event(object, type, reason, message);
  }
  idle(): Promise<void> {
    return this.#made?.idle() ?? Promise.resolve();
  }
  stop(): Promise<void> {
    this.#stopped = true;
    return this.#made?.stop() ?? Promise.resolve();
  }
}
