// An in-memory Lease API (one Lease, optimistic concurrency on resourceVersion) for unit tests
// of the node lease and the fleet's Lease fencing.
import { ApiException, type V1Lease } from '@kubernetes/client-node';
import type { LeaseApi } from '../../src/kube/api-clients.js';
import { NODE_LEASE_NAMESPACE } from '../../src/node/node-lease.js';

export const apiError = (code: number, reason: string): ApiException<string> =>
  new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', reason }), {});

// Leases go through JSON, as they would on the wire (renewTime is a MicroTime string there).
export const wire = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

export class FakeLeaseApi implements LeaseApi {
  lease: V1Lease | undefined;
  readonly calls: string[] = [];
  /** Each call takes the first of these, if any, and fails with it. */
  failures: Error[] = [];
  /** Replaces that are written and then fail with this error, as a call whose deadline passed after the server wrote it. */
  lostAnswers: Error[] = [];
  #rv = 0;

  #fail(): void {
    const err = this.failures.shift();
    if (err) throw err;
  }

  /** Another writer replaces the Lease (a new resourceVersion), as another replica would. */
  overwrite(spec: V1Lease['spec']): void {
    this.lease = wire({ ...this.lease, metadata: { ...this.lease?.metadata, resourceVersion: String(++this.#rv) }, spec: { ...this.lease?.spec, ...spec } });
  }

  async readNamespacedLease(p: { name: string; namespace: string }): Promise<V1Lease> {
    this.calls.push('read');
    this.#fail();
    if (!this.lease || p.namespace !== NODE_LEASE_NAMESPACE) throw apiError(404, 'NotFound');
    return wire(this.lease);
  }

  async createNamespacedLease(p: { namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.calls.push('create');
    this.#fail();
    if (this.lease) throw apiError(409, 'AlreadyExists');
    this.lease = wire({ ...p.body, metadata: { ...p.body.metadata, namespace: p.namespace, resourceVersion: String(++this.#rv) } });
    return wire(this.lease);
  }

  async replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease }): Promise<V1Lease> {
    this.calls.push('replace');
    this.#fail();
    if (!this.lease) throw apiError(404, 'NotFound');
    if (p.body.metadata?.resourceVersion !== this.lease.metadata?.resourceVersion) throw apiError(409, 'Conflict');
    this.lease = wire({ ...p.body, metadata: { ...p.body.metadata, resourceVersion: String(++this.#rv) } });
    const lost = this.lostAnswers.shift();
    if (lost) throw lost;
    return wire(this.lease);
  }
}
