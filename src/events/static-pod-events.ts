import { CONFIG_HASH_ANNOTATION_KEY, CONFIG_MIRROR_ANNOTATION_KEY } from '../constants.js';
import { hasErrorCode, quote } from '../errors.js';
import { ApiStatusError } from '../kube/api-error.js';
import type { Pod } from '../pod/types.js';
import type { PodConfigEvent } from '../sources/pod-config.js';
import type { EventObjectRef, EventRecorder } from './event-recorder.js';
import { objectKey } from '../values/object-key.js';
import { podUID } from '../values/pod-format.js';

/**
 * The reasons of the events kubelet-pods records about static and mirror pods (docs/events.md
 * says when each fires). Only `FailedValidation` is the kubelet's own; the others go beyond
 * it: the kubelet only logs these situations, and users find out much later that a static
 * pod has no mirror.
 */
export const StaticPodEventReason = {
  /** The API server refused a mirror pod (admission webhook or policy, NodeRestriction, a missing namespace, …). */
  FailedCreateMirrorPod: 'FailedCreateMirrorPod',
  /** A pod that is not this static pod's mirror holds the mirror's name and cannot be replaced. */
  MirrorPodConflict: 'MirrorPodConflict',
  /** A manifest was refused at decode: not a pod, invalid, too large, referencing API objects. */
  FailedDecodeStaticPod: 'FailedDecodeStaticPod',
  /** A second manifest defines a pod whose full name an earlier one already has (on the Node). */
  DuplicateStaticPod: 'DuplicateStaticPod',
  /** The kubelet's own reason for the same duplicate, on the pod (config.go filterInvalidPods). */
  FailedValidation: 'FailedValidation',
} as const;

export type StaticPodEventReason = (typeof StaticPodEventReason)[keyof typeof StaticPodEventReason];

/** The kubelet's reference to its Node in events: the node name as the UID too, no namespace. */
export function nodeEventRef(nodeName: string): EventObjectRef {
  return { kind: 'Node', name: nodeName, uid: nodeName };
}

/**
 * A mirror pod as `kubectl describe pod` looks its events up: by name and namespace, and by
 * the UID its `kubernetes.io/config.mirror` annotation holds (the static pod's hash), not the
 * mirror's own UID. Undefined for a pod that is not a mirror.
 */
export function mirrorEventRef(mirror: Pod): EventObjectRef | undefined {
  const hash = mirror.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY];
  if (hash === undefined) return undefined;
  return { kind: 'Pod', name: mirror.metadata?.name ?? '', namespace: mirror.metadata?.namespace ?? '', uid: hash };
}

/**
 * The pod a container event is about, as the kubelet refers to it: a static pod by its own
 * UID (the hash its mirror carries as `config.mirror`, which `kubectl describe` looks up), an
 * API pod by its UID and the resourceVersion the node had; with the container's field path.
 */
export function podEventRef(pod: Pod, fieldPath: string | undefined): EventObjectRef {
  const meta = pod.metadata;
  const ref: { -readonly [K in keyof EventObjectRef]: EventObjectRef[K] } = { kind: 'Pod', name: meta?.name ?? '', namespace: meta?.namespace ?? '', uid: meta?.uid ?? '' };
  if (meta?.resourceVersion !== undefined && meta.resourceVersion !== '') ref.resourceVersion = meta.resourceVersion;
  if (fieldPath !== undefined) ref.fieldPath = fieldPath;
  return ref;
}

/** The mirror-to-be of a static pod, by the hash its mirror will carry. */
function staticPodEventRef(pod: Pod): EventObjectRef {
  const hash = pod.metadata?.annotations?.[CONFIG_HASH_ANNOTATION_KEY] ?? podUID(pod);
  return { kind: 'Pod', name: pod.metadata?.name ?? '', namespace: pod.metadata?.namespace ?? '', uid: hash };
}

export interface StaticPodEventsOptions {
  recorder: Pick<EventRecorder, 'event'>;
  nodeName: string;
  /** The mirror pod the agent knows for a full name (the pod manager's), if any. */
  getMirrorPod: (podFullName: string) => Pod | undefined;
}

/** Turns what went wrong with static and mirror pods into events on the Node and the mirror. */
export interface StaticPodEvents {
  /**
   * A mirror pod create failed. Recorded only when the API server answered (a refusal, a name
   * taken); an unreachable server is only logged, since the event could not be written either.
   */
  mirrorCreateFailed(staticPod: Pod, podFullName: string, err: unknown): void;
  /**
   * The API server refused to delete `mirror`, a mirror of `staticPod`'s name with another
   * hash, so it cannot be replaced.
   */
  mirrorNotReplaced(staticPod: Pod, mirror: Pod, podFullName: string, refusal: Error): void;
  /** A manifest file was refused at decode. */
  manifestRejected(path: string, err: Error): void;
  /**
   * The manifest URL's body was refused at decode. The event names the URL without its user
   * information, query and fragment, which may hold credentials: events are readable cluster-wide.
   */
  manifestURLRejected(url: string, err: Error): void;
  /** The merger dropped a pod whose full name an earlier pod of its source has. */
  duplicateIgnored(event: PodConfigEvent): void;
}

/**
 * A class, its methods on the prototype: a fleet holds one per node, and as an object of
 * closures over a context of their own it cost about 0.5 KB a node (docs/performance.md, "A
 * fifth round").
 */
class NodeStaticPodEvents implements StaticPodEvents {
  readonly #recorder: Pick<EventRecorder, 'event'>;
  readonly #node: EventObjectRef;
  readonly #getMirrorPod: (podFullName: string) => Pod | undefined;

  constructor(options: StaticPodEventsOptions) {
    this.#recorder = options.recorder;
    this.#node = nodeEventRef(options.nodeName);
    this.#getMirrorPod = options.getMirrorPod;
  }

  mirrorCreateFailed(staticPod: Pod, podFullName: string, err: unknown): void {
    const message = `Static pod ${objectKey(staticPod)} has no mirror pod: ${(err as Error).message}`;
    if (hasErrorCode(err, 'KP_ERR_MIRROR_HASH_CONFLICT')) {
      this.#onNodeAndMirror(podFullName, StaticPodEventReason.MirrorPodConflict, message);
      return;
    }
    if (!hasErrorCode(err, 'KP_ERR_MIRROR_CREATE') || !(err.cause instanceof ApiStatusError) || err.cause.code === undefined) return;
    // A create answered AlreadyExists whose holder the node may not even read.
    const taken = err.cause.code === 409 && err.cause.reason === 'AlreadyExists';
    this.#onNodeAndMirror(podFullName, taken ? StaticPodEventReason.MirrorPodConflict : StaticPodEventReason.FailedCreateMirrorPod, message);
  }

  mirrorNotReplaced(staticPod: Pod, mirror: Pod, podFullName: string, refusal: Error): void {
    const hash = mirror.metadata?.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY] ?? '';
    this.#onNodeAndMirror(
      podFullName,
      StaticPodEventReason.MirrorPodConflict,
      `Static pod ${objectKey(staticPod)} has no up-to-date mirror pod: the mirror pod in place (config.mirror ${quote(hash)}) could not be deleted: ${refusal.message}`,
    );
  }

  manifestRejected(path: string, err: Error): void {
    // Decode errors begin with the path already; it is said once.
    const reason = err.message.startsWith(`${path}: `) ? err.message.slice(path.length + 2) : err.message;
    this.#recorder.event(this.#node, 'Warning', StaticPodEventReason.FailedDecodeStaticPod, `Static pod manifest ${quote(path)} ignored: ${reason}`);
  }

  manifestURLRejected(url: string, err: Error): void {
    const shown = urlForEvent(url);
    const reason = err.message.split(url).join(shown);
    this.#recorder.event(this.#node, 'Warning', StaticPodEventReason.FailedDecodeStaticPod, `Static pods from manifest URL ${quote(shown)} ignored: ${reason}`);
  }

  duplicateIgnored(event: PodConfigEvent): void {
    const dropped = event.origin !== undefined ? `from ${quote(event.origin)}` : `(UID ${quote(podUID(event.pod))})`;
    const kept = event.keptOrigin !== undefined ? quote(event.keptOrigin) : `the pod with UID ${quote(podUID(event.keptPod))}`;
    this.#recorder.event(
      this.#node,
      'Warning',
      StaticPodEventReason.DuplicateStaticPod,
      `Static pod ${objectKey(event.pod)} ${dropped} ignored: ${kept} of source ${quote(event.source)} defines a pod of the same name, which is kept`,
    );
    // The kubelet's own event, on the mirror users see: the kept pod's (the dropped pod never has one).
    this.#recorder.event(staticPodEventRef(event.keptPod), 'Warning', StaticPodEventReason.FailedValidation, event.message);
  }

  /** On the Node, and on the mirror pod of that full name if there is one. */
  #onNodeAndMirror(podFullName: string, reason: StaticPodEventReason, message: string): void {
    this.#recorder.event(this.#node, 'Warning', reason, message);
    const mirror = this.#getMirrorPod(podFullName);
    const ref = mirror && mirrorEventRef(mirror);
    if (ref) this.#recorder.event(ref, 'Warning', reason, message);
  }
}

export function createStaticPodEvents(options: StaticPodEventsOptions): StaticPodEvents {
  return new NodeStaticPodEvents(options);
}

/** A URL as an event may show it: scheme, host and path only. */
export function urlForEvent(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '<manifest URL>';
  }
}
