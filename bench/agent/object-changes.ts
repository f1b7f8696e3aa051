// What the API server saw one node's agent change over a window: watches (as admin) of its
// Node, its Lease and the Events it reported, counting ADDED/MODIFIED/DELETED from a
// resourceVersion taken when the window opens. A write that changes nothing produces no event,
// so these counts are the writes that changed an object; the agents' own request counts
// (subjects.ts) are every write sent.
import { CoordinationV1Api, CoreV1Api, Watch, type CoreV1Event, type KubeConfig } from '@kubernetes/client-node';

export interface ObjectChanges {
  node: number;
  lease: number;
  events: number;
  /** The changed Events by reason. */
  eventReasons: Record<string, number>;
}

export class ObjectChangeCounter {
  readonly changes: ObjectChanges = { node: 0, lease: 0, events: 0, eventReasons: {} };
  #aborts: AbortController[] = [];

  constructor(
    private readonly kc: KubeConfig,
    private readonly node: string,
  ) {}

  async start(): Promise<void> {
    const core = this.kc.makeApiClient(CoreV1Api);
    const coordination = this.kc.makeApiClient(CoordinationV1Api);
    const byName = `metadata.name=${this.node}`;
    const nodes = await core.listNode({ fieldSelector: byName });
    const leases = await coordination.listNamespacedLease({ namespace: 'kube-node-lease', fieldSelector: byName });
    const events = await core.listEventForAllNamespaces({ limit: 1 });
    await this.#watch('/api/v1/nodes', byName, nodes.metadata?.resourceVersion, () => this.changes.node++);
    await this.#watch('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', byName, leases.metadata?.resourceVersion, () => this.changes.lease++);
    await this.#watch('/api/v1/events', undefined, events.metadata?.resourceVersion, (obj) => {
      const e = obj as CoreV1Event;
      if (e.source?.host !== this.node && e.reportingInstance !== this.node) return;
      this.changes.events++;
      const reason = e.reason ?? '';
      this.changes.eventReasons[reason] = (this.changes.eventReasons[reason] ?? 0) + 1;
    });
  }

  async #watch(path: string, fieldSelector: string | undefined, resourceVersion: string | undefined, count: (obj: unknown) => void): Promise<void> {
    const query: Record<string, string | boolean> = { allowWatchBookmarks: true };
    if (fieldSelector) query.fieldSelector = fieldSelector;
    if (resourceVersion) query.resourceVersion = resourceVersion;
    const abort = await new Watch(this.kc).watch(
      path,
      query,
      (type, obj) => {
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') count(obj);
      },
      () => {},
    );
    this.#aborts.push(abort);
  }

  stop(): ObjectChanges {
    for (const a of this.#aborts) a.abort();
    this.#aborts = [];
    return { ...this.changes, eventReasons: { ...this.changes.eventReasons } };
  }
}
