// The kubelet port's path → nodes/<subresource> mapping and verbs, as the kubelet's
// pkg/kubelet/server/auth_test.go (TestAuthzCoverage, GetRequestAttributes) expects them with
// KubeletFineGrainedAuthz on.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestAttributes } from '../../../src/server/request-attributes.js';

describe('requestAttributes', () => {
  const cases = [
    { desc: '/metrics', method: 'GET', path: '/metrics', verb: 'get', subresources: ['metrics'] },
    { desc: '/metrics/cadvisor', method: 'GET', path: '/metrics/cadvisor', verb: 'get', subresources: ['metrics'] },
    { desc: '/metricsx is not /metrics', method: 'GET', path: '/metricsx', verb: 'get', subresources: ['proxy'] },
    { desc: '/stats/summary', method: 'GET', path: '/stats/summary', verb: 'get', subresources: ['stats'] },
    { desc: '/logs/', method: 'GET', path: '/logs/syslog', verb: 'get', subresources: ['log'] },
    { desc: '/pods: pods, then proxy', method: 'GET', path: '/pods', verb: 'get', subresources: ['pods', 'proxy'] },
    { desc: '/runningpods/', method: 'GET', path: '/runningpods/', verb: 'get', subresources: ['pods', 'proxy'] },
    { desc: '/healthz: healthz, then proxy', method: 'GET', path: '/healthz', verb: 'get', subresources: ['healthz', 'proxy'] },
    { desc: '/configz: configz, then proxy', method: 'GET', path: '/configz', verb: 'get', subresources: ['configz', 'proxy'] },
    { desc: '/containerLogs is proxy', method: 'GET', path: '/containerLogs/ns/pod/c', verb: 'get', subresources: ['proxy'] },
    { desc: '/flagz is configz', method: 'GET', path: '/flagz', verb: 'get', subresources: ['configz'] },
    { desc: '/checkpoint', method: 'POST', path: '/checkpoint/ns/pod/c', verb: 'create', subresources: ['checkpoint'] },
    { desc: 'PUT', method: 'PUT', path: '/x', verb: 'update', subresources: ['proxy'] },
    { desc: 'PATCH', method: 'PATCH', path: '/x', verb: 'patch', subresources: ['proxy'] },
    { desc: 'DELETE', method: 'DELETE', path: '/x', verb: 'delete', subresources: ['proxy'] },
    { desc: 'HEAD has no verb', method: 'HEAD', path: '/pods', verb: '', subresources: ['pods', 'proxy'] },
  ];
  for (const c of cases) {
    it(c.desc, () => {
      assert.deepEqual(requestAttributes(c.method, c.path), { verb: c.verb, subresources: c.subresources });
    });
  }
});
