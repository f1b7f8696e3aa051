// Which requests yield in the token bucket: pod status writes only.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { priorityOf } from '../../../src/kube/api-clients.js';

const HttpMethod = { GET: 'GET', POST: 'POST', PUT: 'PUT', PATCH: 'PATCH', DELETE: 'DELETE' } as const;
const of = (method: string, path: string): string => priorityOf(method, path);

it('pod status writes are low priority; mirrors, Node and Lease are high', () => {
  assert.equal(of(HttpMethod.PATCH, '/api/v1/namespaces/kube-system/pods/etcd-n1/status'), 'low');
  assert.equal(of(HttpMethod.PUT, '/api/v1/namespaces/kube-system/pods/etcd-n1/status'), 'low');
  assert.equal(of(HttpMethod.POST, '/api/v1/namespaces/kube-system/pods'), 'high');
  assert.equal(of(HttpMethod.DELETE, '/api/v1/namespaces/kube-system/pods/etcd-n1'), 'high');
  assert.equal(of(HttpMethod.GET, '/api/v1/namespaces/kube-system/pods/etcd-n1/status'), 'high');
  assert.equal(of(HttpMethod.PATCH, '/api/v1/nodes/n1/status'), 'high');
  assert.equal(of(HttpMethod.PUT, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1'), 'high');
});
