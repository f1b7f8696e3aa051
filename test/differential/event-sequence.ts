// The `events` area of the differential suite: what each node did to the API server during a
// scenario, as a sequence of steps per object that can be compared across the two nodes.
// A step says what kind of change an object went through (mirror created, status written,
// deletion requested, deleted), with everything that must differ between two nodes or two
// runs replaced: UIDs become incarnation numbers (#1, #2, … in order of appearance), static
// pod hashes become h1, h2, …, times are kept apart (for the timing report, not compared).
// Consecutive identical steps are one step: how often a node repeats the same status write
// is load, not behaviour (the request counts report it).
import type { RecordedRequest } from './api-proxy.js';
import { podOfRequest } from './api-proxy.js';
import { describeDeleteOptions } from './request-body.js';

/** One change seen on a watch, as the recorder keeps it. */
export interface WatchRecord {
  /** performance.now() when the event arrived. */
  t: number;
  kind: 'pod' | 'node' | 'lease' | 'event';
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  // Whatever the API server sent: typed loosely on purpose, the summaries read a few fields.
  object: ApiObject;
}

export interface ApiObject {
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    deletionTimestamp?: string | Date;
    deletionGracePeriodSeconds?: number;
    ownerReferences?: unknown[];
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface Step {
  /** performance.now() of the change. */
  t: number;
  text: string;
}

const HASH_ANNOTATION = 'kubernetes.io/config.hash';

/** How much later than the watch event a DELETE's response may reach the proxy. */
const MATCH_SLACK_MS = 1000;

interface ContainerStatusLike {
  name?: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; running?: unknown; terminated?: { reason?: string; exitCode?: number } };
}

function containerState(c: ContainerStatusLike): string {
  const s = c.state ?? {};
  let state: string;
  if (s.running !== undefined && s.running !== null) state = 'running';
  else if (s.terminated !== undefined && s.terminated !== null) state = `terminated(${s.terminated.reason ?? ''})`;
  else if (s.waiting !== undefined && s.waiting !== null) state = `waiting(${s.waiting.reason ?? ''})`;
  else state = 'unknown';
  const ready = c.ready === true ? ' ready' : '';
  const restarts = (c.restartCount ?? 0) > 0 ? ` restarts=${c.restartCount}` : '';
  return `${c.name ?? '?'}=${state}${ready}${restarts}`;
}

/**
 * A pod status in one line: the phase, then each init container and container with its state
 * (waiting and terminated with their reason) and readiness, e.g.
 * `Running; init: prep=terminated(Completed); app=running ready`. Conditions, times, IPs and
 * IDs are left out: the `status` area compares them field by field.
 */
export function summarisePodStatus(status: Record<string, unknown> | undefined): string {
  const phase = typeof status?.['phase'] === 'string' ? status['phase'] : '(no phase)';
  const list = (key: string): ContainerStatusLike[] => (Array.isArray(status?.[key]) ? (status[key] as ContainerStatusLike[]) : []);
  const parts = [phase];
  const init = list('initContainerStatuses');
  if (init.length > 0) parts.push(`init: ${init.map(containerState).join(', ')}`);
  const containers = list('containerStatuses');
  if (containers.length > 0) parts.push(containers.map(containerState).join(', '));
  return parts.join('; ');
}

/** The same value in JSON (Dates as strings), for "did this part change". */
function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** Labels for values in order of first appearance: `#1`, `#2`, … or `h1`, `h2`, …. */
class Labeller {
  readonly #labels = new Map<string, string>();
  constructor(readonly prefix: string) {}
  label(value: string | undefined): string {
    const key = value ?? '';
    let l = this.#labels.get(key);
    if (l === undefined) {
      l = `${this.prefix}${this.#labels.size + 1}`;
      this.#labels.set(key, l);
    }
    return l;
  }
}

/**
 * The steps of one mirror pod name on one node, from the watch records about it (every
 * incarnation, in arrival order) and the node's own requests about it:
 *
 * - `created #k hN`: a mirror appeared (incarnation k, static pod hash N);
 * - `status #k <summary>`: its status was written (see summarisePodStatus);
 * - `deletion requested #k grace G by node|other (…)`: deletionTimestamp set, with the grace
 *   period the server recorded, by the node when its own DELETE matches (with what it asked
 *   for), by someone else otherwise;
 * - `deleted #k by node (grace G, uid precondition)` or `deleted #k by other`;
 * - `updated #k <fields>`: metadata or spec changed (not expected of a mirror).
 */
export function podSteps(records: readonly WatchRecord[], requests: readonly RecordedRequest[]): Step[] {
  const incarnations = new Labeller('#');
  const hashes = new Labeller('h');
  const last = new Map<string, ApiObject>();
  const deletes = requests.filter((r) => r.method === 'DELETE' && r.status >= 200 && r.status < 300);
  const usedDeletes = new Set<RecordedRequest>();
  // The node's successful DELETE behind a change seen at `t`. The response can reach the
  // proxy a little after the watch event reaches the recorder, hence the slack. A DELETE with
  // grace 0 removes a pod at once; any other only sets its deletionTimestamp.
  const nodeDelete = (t: number, graceful: boolean): RecordedRequest | undefined => {
    const hit = deletes.find(
      (r) => !usedDeletes.has(r) && r.t <= t + MATCH_SLACK_MS && (r.deleteOptions?.gracePeriodSeconds === 0) !== graceful,
    );
    if (hit !== undefined) usedDeletes.add(hit);
    return hit;
  };
  const steps: Step[] = [];
  for (const r of records) {
    const uid = r.object.metadata?.uid ?? '';
    const k = incarnations.label(uid);
    const before = last.get(uid);
    last.set(uid, r.object);
    if (r.type === 'ADDED') {
      steps.push({ t: r.t, text: `created ${k} ${hashes.label(r.object.metadata?.annotations?.[HASH_ANNOTATION])}` });
      continue;
    }
    if (r.type === 'DELETED') {
      const byNode = nodeDelete(r.t, false) ?? nodeDelete(r.t, true);
      steps.push({ t: r.t, text: byNode !== undefined ? `deleted ${k} by node (${describeDeleteOptions(byNode.deleteOptions)})` : `deleted ${k} by other` });
      continue;
    }
    const meta = r.object.metadata ?? {};
    const prev = before?.metadata ?? {};
    // A DELETE with grace 0 shows as a deletionTimestamp with grace 0 and, at once, the
    // removal: one step (the removal), not two.
    const deletionStarted = (meta.deletionTimestamp ?? null) !== null && (prev.deletionTimestamp ?? null) === null;
    if (deletionStarted && meta.deletionGracePeriodSeconds !== 0) {
      const byNode = nodeDelete(r.t, true);
      const grace = meta.deletionGracePeriodSeconds;
      const who = byNode !== undefined ? `by node (${describeDeleteOptions(byNode.deleteOptions)})` : 'by other';
      steps.push({ t: r.t, text: `deletion requested ${k} grace ${grace ?? '?'} ${who}` });
    }
    const changed: string[] = (['labels', 'annotations', 'ownerReferences'] as const).filter((f) => !same(meta[f], prev[f]));
    if (!same(r.object.spec, before?.spec)) changed.push('spec');
    if (changed.length > 0) steps.push({ t: r.t, text: `updated ${k} ${changed.join(',')}` });
    if (!same(r.object.status, before?.status)) steps.push({ t: r.t, text: `status ${k} ${summarisePodStatus(r.object.status)}` });
  }
  return collapse(steps);
}

const STATUS_STEP = /^status (#\d+) /;
const DELETED_STEP = /^deleted (#\d+) /;

/**
 * A scenario's steps as compared, from its window's steps and the last step before it:
 *
 * - consecutive status writes to one incarnation count as one, the last: which states a node
 *   reports on the way (a Pending write before Running, or none; Pending again while a
 *   restarted hollow kubelet recreates its containers) depends on how fast its runtime starts
 *   containers and when its status loop runs, not on how it manages mirrors;
 * - a status that ends where the window started (the same as the last step before it) is no
 *   change;
 * - a status write without a running container just before the same incarnation's deletion
 *   is left out: whether the kubelet's status loop reports the killed containers before its
 *   housekeeping deletes the mirror is a race inside the kubelet.
 *
 * The printed timeline keeps every step.
 */
export function settledSteps(window: readonly Step[], before?: Step): Step[] {
  const folded: Step[] = [];
  for (const s of window) {
    const prev = folded[folded.length - 1];
    const k = STATUS_STEP.exec(s.text)?.[1];
    if (k !== undefined && prev !== undefined && STATUS_STEP.exec(prev.text)?.[1] === k) folded[folded.length - 1] = s;
    else folded.push(s);
  }
  if (folded[0] !== undefined && before !== undefined && STATUS_STEP.test(folded[0].text) && folded[0].text === before.text) folded.shift();
  return folded.filter((s, i) => {
    const k = STATUS_STEP.exec(s.text)?.[1];
    const next = folded[i + 1];
    const deletedNext = next !== undefined && DELETED_STEP.exec(next.text)?.[1] === k;
    return !(k !== undefined && deletedNext && !/=running\b/.test(s.text));
  });
}

/** Drops a step equal to the one before it (keeping the first one's time). */
export function collapse(steps: readonly Step[]): Step[] {
  const out: Step[] = [];
  for (const s of steps) if (out[out.length - 1]?.text !== s.text) out.push(s);
  return out;
}

/** Steps from `t0` on (the scenario's window), with times relative to it. */
export function windowSteps(steps: readonly Step[], t0: number, t1 = Infinity): Step[] {
  return steps.filter((s) => s.t >= t0 && s.t <= t1).map((s) => ({ t: s.t - t0, text: s.text }));
}

/**
 * A node's refused requests about one pod, as sorted unique `METHOD[ subresource] code`
 * entries (`POST 403`, `PATCH status 422`): whether a node sends requests the server refuses
 * is behaviour; how many depends on timing. Left out: 404 and 409, the answers to races both
 * nodes run into and shrug off (a mirror already created or already deleted, a UID
 * precondition that no longer holds); requestCounts shows them. Also left out: a read
 * answered 403 after a successful DELETE of the pod. The Node authorizer only lets a node read
 * pods its graph binds to it, and a deleted pod has left the graph, so this is its "not found":
 * the kubelet's status manager sometimes reads a mirror its housekeeping has just deleted.
 */
export function refusedRequests(requests: readonly RecordedRequest[]): string[] {
  const out = new Set<string>();
  let deletedAt = Infinity;
  for (const r of requests) {
    if (r.method === 'DELETE' && r.status >= 200 && r.status < 300) deletedAt = Math.min(deletedAt, r.t);
  }
  for (const r of requests) {
    if ((r.status >= 200 && r.status < 300) || r.status === 404 || r.status === 409) continue;
    if (r.method === 'GET' && r.status === 403 && r.t > deletedAt) continue;
    out.add(requestKind(r));
  }
  return [...out].sort();
}

function requestKind(r: RecordedRequest): string {
  const sub = podOfRequest(r.path)?.subresource;
  return `${r.method}${sub !== undefined ? ` ${sub}` : ''} ${r.status}`;
}

/** `POST 201 ×1, PATCH status 200 ×3, DELETE 409 ×1`, in order of first occurrence. */
export function requestCounts(requests: readonly RecordedRequest[]): string {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(requestKind(r), (counts.get(requestKind(r)) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ×${n}`).join(', ');
}

/** The node's requests about the pod `name` in `namespace` (by path, or by body for a POST). */
export function requestsAboutPod(requests: readonly RecordedRequest[], namespace: string, name: string): RecordedRequest[] {
  return requests.filter((r) => {
    if (r.watch) return false;
    const target = podOfRequest(r.path);
    if (target !== undefined) return target.namespace === namespace && target.name === name;
    return r.method === 'POST' && r.path === `/api/v1/namespaces/${namespace}/pods` && r.objectName === name;
  });
}

/** A Node's steps: created, deleted, and each change of its Ready condition; heartbeats are counted apart. */
export function nodeSteps(records: readonly WatchRecord[]): Step[] {
  const incarnations = new Labeller('#');
  const steps: Step[] = [];
  for (const r of records) {
    const k = incarnations.label(r.object.metadata?.uid);
    if (r.type === 'ADDED') steps.push({ t: r.t, text: `created ${k}` });
    else if (r.type === 'DELETED') steps.push({ t: r.t, text: `deleted ${k}` });
    const conditions = Array.isArray(r.object.status?.['conditions']) ? (r.object.status['conditions'] as Array<{ type?: string; status?: string; reason?: string }>) : [];
    const ready = conditions.find((c) => c.type === 'Ready');
    if (r.type !== 'DELETED') steps.push({ t: r.t, text: `ready ${k} ${ready === undefined ? '(none)' : `${ready.status} ${ready.reason ?? ''}`.trim()}` });
  }
  return collapse(steps);
}

/** A Lease's steps: created, deleted, holder changes; renewals are counted apart. */
export function leaseSteps(records: readonly WatchRecord[]): Step[] {
  const incarnations = new Labeller('#');
  const holders = new Labeller('holder');
  const steps: Step[] = [];
  for (const r of records) {
    const k = incarnations.label(r.object.metadata?.uid);
    if (r.type === 'ADDED') steps.push({ t: r.t, text: `created ${k}` });
    else if (r.type === 'DELETED') steps.push({ t: r.t, text: `deleted ${k}` });
    const holder = r.object.spec?.['holderIdentity'];
    if (r.type !== 'DELETED') steps.push({ t: r.t, text: `held ${k} by ${holders.label(typeof holder === 'string' ? holder : '')}` });
  }
  return collapse(steps);
}

/**
 * Reasons left out of the per-window comparisons: `Pulling` (reported only the first time a
 * node needs an image, which depends on what ran before) and `MissingClusterDNS` (the kubelet
 * repeats it at every sync of the pod, so its count grows in any window; compared apart, see
 * `clusterDNSWarnings`).
 */
const WINDOW_SKIPPED_REASONS = new Set(['Pulling', 'MissingClusterDNS']);

/** The reasons of the Events a node reported about one pod, sorted, unique (see WINDOW_SKIPPED_REASONS). */
export function eventReasons(records: readonly WatchRecord[]): string[] {
  const out = new Set<string>();
  for (const r of records) {
    const reason = r.object['reason'];
    if (r.type !== 'DELETED' && typeof reason === 'string' && !WINDOW_SKIPPED_REASONS.has(reason)) out.add(reason);
  }
  return [...out].sort();
}

/** What tells two nodes' events apart and must be replaced before comparing them. */
export interface EventContext {
  node: string;
  /** The UIDs of the pods (mirrors or ordinary pods) of that name seen on the node. */
  podUIDs: ReadonlySet<string>;
  /** Their `kubernetes.io/config.mirror` values: the static pods' UIDs, which kubectl describe looks up. */
  mirrorKeys: ReadonlySet<string>;
  /** The pod's name when a controller chose it (random on each node), replaced by `<pod>`. */
  podName?: string;
}

/**
 * The pods of one name a node had (from the recorder's records), as an EventContext; `podName`
 * for a pod a controller named.
 */
export function eventContext(node: string, pods: readonly WatchRecord[], podName?: string): EventContext {
  const podUIDs = new Set<string>();
  const mirrorKeys = new Set<string>();
  for (const r of pods) {
    if (r.object.metadata?.uid !== undefined) podUIDs.add(r.object.metadata.uid);
    const key = r.object.metadata?.annotations?.['kubernetes.io/config.mirror'];
    if (key !== undefined) mirrorKeys.add(key);
  }
  return { node, podUIDs, mirrorKeys, ...(podName !== undefined ? { podName } : {}) };
}

interface EventLike {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { uid?: string; fieldPath?: string; resourceVersion?: string };
}

/**
 * One Event in a line: type, reason, the part of the pod (`spec.containers{main}`, or `(pod)`),
 * what it refers to (`static-pod`: the UID kubectl describe finds through the mirror's
 * config.mirror; `pod`: an ordinary pod's own UID, `+rv` with a resourceVersion) and the
 * message with the node name, the pod's UIDs and a controller's pod name replaced; an image's
 * pull or presence is one message (`image "X" pulled or present`), since which one depends on
 * what ran before.
 */
export function describeEvent(e: EventLike, ctx: EventContext): string {
  const uid = e.involvedObject?.uid ?? '';
  let ref = ctx.mirrorKeys.has(uid) ? 'static-pod' : ctx.podUIDs.has(uid) ? 'pod' : 'other';
  if (e.involvedObject?.resourceVersion !== undefined) ref += '+rv';
  let message = e.message ?? '';
  if (ctx.podName !== undefined) message = message.split(ctx.podName).join('<pod>');
  message = message.split(ctx.node).join('<node>');
  for (const u of [...ctx.mirrorKeys, ...ctx.podUIDs]) if (u !== '') message = message.split(u).join('<uid>');
  message = message
    .replace(/^Successfully pulled image ("[^"]*") in .*$/, 'image $1 pulled or present')
    .replace(/^Container image ("[^"]*") already present on machine$/, 'image $1 pulled or present');
  return `${e.type ?? '?'} ${e.reason ?? '?'} ${e.involvedObject?.fieldPath ?? '(pod)'} ref=${ref}: ${message}`;
}

/** The Events a node reported about one pod, each described (describeEvent), sorted, unique (see WINDOW_SKIPPED_REASONS). */
export function eventDetails(records: readonly WatchRecord[], ctx: EventContext): string[] {
  const out = new Set<string>();
  for (const r of records) {
    const e = r.object as EventLike;
    if (r.type !== 'DELETED' && !WINDOW_SKIPPED_REASONS.has(e.reason ?? '')) out.add(describeEvent(e, ctx));
  }
  return [...out].sort();
}

/** The node's `MissingClusterDNS` warnings about the pod (whenever reported), described, unique. */
export function clusterDNSWarnings(records: readonly WatchRecord[], ctx: EventContext): string[] {
  const out = new Set<string>();
  for (const r of records) {
    const e = r.object as EventLike;
    if (r.type !== 'DELETED' && e.reason === 'MissingClusterDNS') out.add(describeEvent(e, ctx));
  }
  return [...out].sort();
}

/** Below this, a node's first reaction to an action counts as at once. */
export const AT_ONCE_MS = 750;

/**
 * How soon a node reacted: `at once` (its first step within `atOnceMs` of the action) or
 * `later`; undefined when it took no step. Steps by someone else (the user's own delete) do
 * not count. Times come from the printed timeline; only this class is compared, because
 * both nodes' exact times vary from run to run.
 */
export function reaction(steps: readonly Step[], atOnceMs = AT_ONCE_MS): string | undefined {
  const own = steps.find((s) => !/ by other$/.test(s.text));
  if (own === undefined) return undefined;
  return own.t < atOnceMs ? 'at once' : 'later';
}

/** A time outside the window `[from, to]`; no window, or no time, is never outside. */
export function outsideWindow(t: number | undefined, window: readonly [number, number] | undefined): boolean {
  return t !== undefined && window !== undefined && (t < window[0] || t > window[1]);
}

/**
 * Whether the kubelet's time of a named step differs from ours in a way the suite reports as
 * a `timing` difference: it took no such step, or ours took none to compare with, or it took
 * it outside the window, or further from ours than the tolerance. Ours outside the window is
 * not this: the suite asserts our window on its own.
 */
export function realTimingOff(real: number | undefined, ours: number | undefined, toleranceMs: number, window?: readonly [number, number]): boolean {
  return real === undefined || ours === undefined || Math.abs(ours - real) > toleranceMs || outsideWindow(real, window);
}

/** `1.23 s` or `850 ms`. */
export function formatMs(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}
