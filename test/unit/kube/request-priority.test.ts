// Which requests yield in the token bucket (pod status writes only), and which skip it (the
// node's heartbeats, as the kubelet's heartbeat client has no throttling).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { isHeartbeat, priorityOf } from '../../../src/kube/api-clients.js';

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

it("the node's Lease, Node read and Node status write are heartbeats; registration, lists and pods are not", () => {
  const lease = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
  for (const method of [HttpMethod.GET, HttpMethod.PUT, HttpMethod.POST]) assert.equal(isHeartbeat(method, method === HttpMethod.POST ? lease : `${lease}/n1`), true, method);
  assert.equal(isHeartbeat(HttpMethod.GET, '/api/v1/nodes/n1'), true);
  assert.equal(isHeartbeat(HttpMethod.PATCH, '/api/v1/nodes/n1/status'), true);
  assert.equal(isHeartbeat(HttpMethod.POST, '/api/v1/nodes'), false);
  assert.equal(isHeartbeat(HttpMethod.GET, '/api/v1/nodes'), false);
  assert.equal(isHeartbeat(HttpMethod.PATCH, '/api/v1/nodes/n1'), false);
  assert.equal(isHeartbeat(HttpMethod.GET, '/apis/coordination.k8s.io/v1/namespaces/default/leases/n1'), false);
  assert.equal(isHeartbeat(HttpMethod.PATCH, '/api/v1/namespaces/kube-system/pods/etcd-n1/status'), false);
});
