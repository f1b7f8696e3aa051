// Watches, as the admin, what nodes under test write: their pods (mirrors), their Node, their
// Lease, and the Events they report, and keeps every change with the time it arrived. One
// recorder serves both nodes, so both are seen through the same watch connection timing.
import { performance } from 'node:perf_hooks';

import { KubeConfig, Watch } from '@kubernetes/client-node';

import type { ApiObject, WatchRecord } from './event-sequence.js';

interface WatchTarget {
  kind: WatchRecord['kind'];
  /** The collection path (for list and watch). */
  path: string;
  fieldSelector?: string;
}

export class EventRecorder {
  readonly records: WatchRecord[] = [];
  readonly #kc: KubeConfig;
  readonly #aborts = new Set<AbortController>();
  #stopped = false;
  /** Watches that ended with an error and were resumed (a test may want to know). */
  resumed = 0;

  private constructor(kc: KubeConfig) {
    this.#kc = kc;
  }

  /**
   * Starts watching the pods bound to each of `nodes`, their Nodes and Leases, and all Events
   * (filtered when read). Objects that already exist are recorded as ADDED at start.
   */
  static async start(kubeconfig: string, nodes: readonly string[]): Promise<EventRecorder> {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const recorder = new EventRecorder(kc);
    const targets: WatchTarget[] = [
      ...nodes.map((n): WatchTarget => ({ kind: 'pod', path: '/api/v1/pods', fieldSelector: `spec.nodeName=${n}` })),
      ...nodes.map((n): WatchTarget => ({ kind: 'node', path: '/api/v1/nodes', fieldSelector: `metadata.name=${n}` })),
      ...nodes.map(
        (n): WatchTarget => ({ kind: 'lease', path: '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', fieldSelector: `metadata.name=${n}` }),
      ),
      { kind: 'event', path: '/api/v1/events' },
    ];
    await Promise.all(targets.map((target) => recorder.#watch(target, undefined)));
    return recorder;
  }

  // Without a resourceVersion the server first sends every existing object as ADDED, then
  // the changes; resumed watches start from the last version seen, so nothing is lost.
  async #watch(target: WatchTarget, resourceVersion: string | undefined): Promise<void> {
    if (this.#stopped) return;
    let lastVersion = resourceVersion;
    const query: Record<string, string | boolean> = { allowWatchBookmarks: true };
    if (target.fieldSelector !== undefined) query['fieldSelector'] = target.fieldSelector;
    if (lastVersion !== undefined) query['resourceVersion'] = lastVersion;
    const abort = await new Watch(this.#kc).watch(
      target.path,
      query,
      (type, object: ApiObject) => {
        const rv = object?.metadata && (object.metadata as { resourceVersion?: string }).resourceVersion;
        if (typeof rv === 'string') lastVersion = rv;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
          this.records.push({ t: performance.now(), kind: target.kind, type, object });
        }
      },
      (err: unknown) => {
        this.#aborts.delete(abort);
        if (this.#stopped) return;
        // A watch the server closed (its timeout) or that failed: resume where it stopped.
        if (err !== null && err !== undefined) this.resumed++;
        void this.#watch(target, lastVersion);
      },
    );
    // The request is open once watch() resolves: later changes cannot be missed.
    this.#aborts.add(abort);
  }

  /** Records of one kind about one object name (and namespace, for namespaced kinds). */
  about(kind: WatchRecord['kind'], name: string, namespace?: string): WatchRecord[] {
    return this.records.filter(
      (r) => r.kind === kind && r.object.metadata?.name === name && (namespace === undefined || r.object.metadata?.namespace === namespace),
    );
  }

  /** Events (the API kind) a node reported about the pod `name` in `namespace`. */
  eventsAbout(node: string, namespace: string, name: string): WatchRecord[] {
    return this.records.filter((r) => {
      if (r.kind !== 'event') return false;
      const e = r.object as { involvedObject?: { kind?: string; name?: string; namespace?: string }; source?: { host?: string }; reportingInstance?: string };
      const byNode = e.source?.host === node || e.reportingInstance === node;
      return byNode && e.involvedObject?.kind === 'Pod' && e.involvedObject.name === name && e.involvedObject.namespace === namespace;
    });
  }

  stop(): void {
    this.#stopped = true;
    for (const a of this.#aborts) a.abort();
    this.#aborts.clear();
  }
}
