// Our typed API client (src/kube/typed-apis.ts over src/kube/api-transport.ts): the requests
// each call sends (method, path, query, headers, body) and how a refused call fails, read by
// src/kube/api-error.ts as client-node's failures were.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { ApiException as ClientNodeApiException } from '@kubernetes/client-node';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { DEFAULT_USER_AGENT } from '../../../src/kube/api-transport.js';
import { apiErrorInfo, apiFailureCause, apiStatusOf, isAlreadyExists, isConflict, isNotFound, isUIDMismatch } from '../../../src/kube/api-error.js';
import { ApiException, isApiException } from '../../../src/kube/api-exception.js';
import { V1MicroTime } from '../../../src/kube/micro-time.js';
import { unlimited, type RequestPriority } from '../../../src/kube/rate-limiter.js';
import { answerUseOptions, PatchStrategy, setHeaderOptions } from '../../../src/kube/request-options.js';
import { readAnswer } from '../../../src/kube/api-transport.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** Answers from a queue (status, body, headers), 200 `{}` when empty; records every request. */
let answers: { status: number; body?: string; headers?: Record<string, string> }[] = [];
const seen: Seen[] = [];
let server: Server;
let url: string;

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const a = answers.shift() ?? { status: 200, body: '{}' };
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/prefix`;
});
after(() => server.close());

const kubeConfig = (user: Record<string, unknown> | null = { name: 'u', token: 'tok' }) => ({
  getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }),
  getCurrentUser: () => user as never,
});

const last = (): Seen => seen[seen.length - 1]!;
const status = (code: number, reason: string, extra: object = {}) => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `${reason} message`, ...extra });
const failure = (call: Promise<unknown>): Promise<unknown> => call.then(() => assert.fail('the call succeeded'), (err: unknown) => err);

describe('the typed API calls', () => {
  it('send each call to its path with its query and body, under the server prefix', async () => {
    const { core, coordination, authentication, authorization } = createApiClients(kubeConfig(), unlimited);
    const pod = { metadata: { name: 'p', namespace: 'ns 1' } };
    const lease = { metadata: { name: 'n1' }, spec: { renewTime: new V1MicroTime('2026-01-02T03:04:05.678Z') } };
    const calls: [Promise<unknown>, string, string, unknown][] = [
      [core.createNamespacedPod({ namespace: 'ns 1', body: pod }), 'POST', '/prefix/api/v1/namespaces/ns%201/pods', pod],
      [core.readNamespacedPod({ name: 'p', namespace: 'ns' }), 'GET', '/prefix/api/v1/namespaces/ns/pods/p', ''],
      [
        core.deleteNamespacedPod({ name: 'p', namespace: 'ns', gracePeriodSeconds: 0, body: { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } } }),
        'DELETE',
        '/prefix/api/v1/namespaces/ns/pods/p?gracePeriodSeconds=0',
        { gracePeriodSeconds: 0, preconditions: { uid: 'u1' } },
      ],
      [core.patchNamespacedPodStatus({ name: 'p', namespace: 'ns', body: { status: {} } }), 'PATCH', '/prefix/api/v1/namespaces/ns/pods/p/status', { status: {} }],
      [core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=n1', _continue: 'c', limit: 5 }), 'GET', '/prefix/api/v1/pods?continue=c&fieldSelector=spec.nodeName%3Dn1&limit=5', ''],
      [core.readNode({ name: 'n1' }), 'GET', '/prefix/api/v1/nodes/n1', ''],
      [core.createNode({ body: { metadata: { name: 'n1' } } }), 'POST', '/prefix/api/v1/nodes', { metadata: { name: 'n1' } }],
      [core.patchNodeStatus({ name: 'n1', body: { status: {} } }), 'PATCH', '/prefix/api/v1/nodes/n1/status', { status: {} }],
      [core.listNode(), 'GET', '/prefix/api/v1/nodes', ''],
      [core.createNamespacedEvent({ namespace: 'default', body: { metadata: { name: 'e' }, involvedObject: {} } }), 'POST', '/prefix/api/v1/namespaces/default/events', { metadata: { name: 'e' }, involvedObject: {} }],
      [core.patchNamespacedEvent({ name: 'e', namespace: 'default', body: { count: 2 } }), 'PATCH', '/prefix/api/v1/namespaces/default/events/e', { count: 2 }],
      [coordination.readNamespacedLease({ name: 'n1', namespace: 'kube-node-lease' }), 'GET', '/prefix/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', ''],
      [coordination.createNamespacedLease({ namespace: 'kube-node-lease', body: lease }), 'POST', '/prefix/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { metadata: { name: 'n1' }, spec: { renewTime: '2026-01-02T03:04:05.678000Z' } }],
      [coordination.replaceNamespacedLease({ name: 'n1', namespace: 'kube-node-lease', body: lease }), 'PUT', '/prefix/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', { metadata: { name: 'n1' }, spec: { renewTime: '2026-01-02T03:04:05.678000Z' } }],
      [authentication.createTokenReview({ body: { spec: { token: 'x' } } }), 'POST', '/prefix/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'x' } }],
      [authorization.createSubjectAccessReview({ body: { spec: { user: 'a' } } }), 'POST', '/prefix/apis/authorization.k8s.io/v1/subjectaccessreviews', { spec: { user: 'a' } }],
    ];
    for (const [call, method, path, body] of calls) {
      const before = seen.length;
      assert.deepEqual(await call, {});
      assert.equal(seen.length, before + 1);
      assert.equal(last().method, method, path);
      assert.equal(last().url, path);
      assert.deepEqual(last().body === '' ? '' : JSON.parse(last().body), body, path);
    }
  });

  it('sends the credentials, JSON headers, the User-Agent, and the Content-Type a call sets', async () => {
    const { core } = createApiClients(kubeConfig({ name: 'u', token: 'tok', impersonateUser: 'someone' }), unlimited);
    await core.patchNodeStatus({ name: 'n1', body: { status: { phase: 'x' } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    const h = last().headers;
    assert.equal(h['authorization'], 'Bearer tok');
    assert.equal(h['impersonate-user'], 'someone');
    assert.equal(h['accept'], 'application/json, */*;q=0.8');
    assert.equal(h['content-type'], 'application/merge-patch+json');
    assert.equal(h['content-length'], String(Buffer.byteLength(last().body)));
    assert.equal(h['user-agent'], DEFAULT_USER_AGENT);
    // The API server takes a write's field manager from the User-Agent up to its first '/'.
    assert.equal(h['user-agent']!.split('/')[0], 'kubelet', 'our writes are the kubelet\'s in managedFields');
    // A PATCH without a Content-Type gets client-node's default, a JSON patch; other bodies are JSON.
    await core.patchNamespacedEvent({ name: 'e', namespace: 'default', body: [] });
    assert.equal(last().headers['content-type'], 'application/json-patch+json');
    await core.createNode({ body: {} });
    assert.equal(last().headers['content-type'], 'application/json');

    const basic = createApiClients(kubeConfig({ name: 'u', username: 'a', password: 'b' }), unlimited, { userAgent: 'kubelet-pods/fleet' });
    await basic.core.readNode({ name: 'n1' });
    assert.equal(last().headers['authorization'], `Basic ${Buffer.from('a:b').toString('base64')}`);
    assert.equal(last().headers['user-agent'], 'kubelet-pods/fleet');
    const anonymous = createApiClients(kubeConfig(null), unlimited);
    await anonymous.core.readNode({ name: 'n1' });
    assert.equal(last().headers['authorization'], undefined);
  });

  it('asks the limiter before each call but the heartbeats, pod status writes as low priority', async () => {
    const asked: RequestPriority[] = [];
    const { core } = createApiClients(kubeConfig(), { acquire: async (p = 'high') => void asked.push(p) });
    await core.patchNamespacedPodStatus({ name: 'p', namespace: 'ns', body: {} });
    await core.createNamespacedPod({ namespace: 'ns', body: {} });
    await core.createNode({ body: {} });
    // The Node status update, as the kubelet's heartbeat client sends it: no token.
    await core.readNode({ name: 'n1' });
    await core.patchNodeStatus({ name: 'n1', body: {} });
    assert.deepEqual(asked, ['low', 'high', 'high']);
  });

  it('answer the JSON as the server wrote it (timestamps stay strings)', async () => {
    const { core } = createApiClients(kubeConfig(), unlimited);
    const body = { metadata: { name: 'p', creationTimestamp: '2026-01-02T03:04:05Z', unknownField: 1 } };
    answers = [{ status: 201, body: JSON.stringify(body) }];
    assert.deepEqual(await core.createNamespacedPod({ namespace: 'ns', body: {} }), body);
  });

  it('answer only what the caller reads: the resourceVersion, or nothing', async () => {
    const { core } = createApiClients(kubeConfig(), unlimited);
    // As the API server writes a pod: kind, apiVersion, then metadata with its strings first.
    const pod = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', namespace: 'ns', uid: 'u-1', resourceVersion: '4711', annotations: { resourceVersion: 'not this' } },
      status: { phase: 'Running' },
    };
    const patch = (answerUse: 'whole' | 'resourceVersion' | 'nothing') =>
      core.patchNamespacedPodStatus({ name: 'p', namespace: 'ns', body: {} }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch, answerUseOptions(answerUse)));
    answers = [{ status: 200, body: JSON.stringify(pod) }];
    assert.deepEqual(await patch('resourceVersion'), { metadata: { resourceVersion: '4711' } });
    assert.equal(last().headers['content-type'], PatchStrategy.MergePatch, 'the header options still apply');
    answers = [{ status: 200, body: JSON.stringify(pod) }];
    assert.equal(await patch('nothing'), undefined);
    answers = [{ status: 200, body: JSON.stringify(pod) }];
    assert.deepEqual(await patch('whole'), pod);
    // Text of another shape (labels before the resourceVersion) is parsed whole for it.
    answers = [{ status: 200, body: '{"metadata":{"labels":{"resourceVersion":"no"},"resourceVersion":"12"}}' }];
    assert.deepEqual(await patch('resourceVersion'), { metadata: { resourceVersion: '12' } });
    // A failure is the same ApiException whatever the caller reads.
    answers = [{ status: 404, body: status(404, 'NotFound') }];
    assert.ok(isNotFound(await failure(patch('nothing'))));
  });
});

describe('readAnswer', () => {
  it('finds the object\'s own resourceVersion in the text, and parses when the text is not of that shape', () => {
    assert.deepEqual(readAnswer('{"kind":"Pod","metadata":{"name":"a","resourceVersion":"7"},"spec":{}}', 'resourceVersion'), { metadata: { resourceVersion: '7' } });
    assert.deepEqual(readAnswer('{"kind":"Pod","metadata":{"name":"a"},"spec":{"x":{"resourceVersion":"9"}}}', 'resourceVersion'), { metadata: { resourceVersion: undefined } });
    assert.deepEqual(readAnswer('{"spec":{},"metadata":{"resourceVersion":"3"}}', 'resourceVersion'), { metadata: { resourceVersion: '3' } });
    assert.deepEqual(readAnswer('{"metadata":{"resourceVersion":"a\\"b"}}', 'resourceVersion'), { metadata: { resourceVersion: 'a"b' } });
    assert.equal(readAnswer('', 'whole'), undefined);
    assert.equal(readAnswer('{"a":1}', 'nothing'), undefined);
    assert.throws(() => readAnswer('{not json', 'resourceVersion'), SyntaxError);
  });
});

describe('a refused call', () => {
  it('fails with an ApiException shaped as client-node\'s, read alike by api-error.ts', async () => {
    const { core } = createApiClients(kubeConfig(), unlimited);
    const cases: [number, string, object, (e: unknown) => boolean][] = [
      [404, 'NotFound', {}, isNotFound],
      [409, 'AlreadyExists', {}, isAlreadyExists],
      [409, 'Conflict', {}, isConflict],
      [422, 'Invalid', { details: { causes: [{ reason: 'FieldValueInvalid', field: 'metadata.uid' }] } }, isUIDMismatch],
      [410, 'Expired', {}, (e) => apiErrorInfo(e).code === 410],
    ];
    for (const [code, reason, extra, predicate] of cases) {
      answers = [{ status: code, body: status(code, reason, extra), headers: { 'audit-id': 'a1' } }];
      const err = await failure(core.readNamespacedPod({ name: 'p', namespace: 'ns' }));
      assert.ok(err instanceof ApiException && isApiException(err));
      assert.equal(err.code, code);
      assert.equal(err.body, status(code, reason, extra), 'the Status as raw text, as client-node keeps it');
      assert.equal(err.headers['audit-id'], 'a1');
      assert.deepEqual(apiErrorInfo(err), { code, reason });
      assert.ok(predicate(err), `${code} ${reason}`);
      assert.deepEqual(apiStatusOf(err), { code, reason, message: `${reason} message` });
      // The same answer as client-node reported it reads the same.
      const theirs = new ClientNodeApiException(code, 'Unknown API Status Code!', status(code, reason, extra), err.headers);
      assert.equal(err.message, theirs.message);
      assert.deepEqual(apiErrorInfo(theirs), apiErrorInfo(err));
      assert.equal(String(apiFailureCause(err)), String(apiFailureCause(theirs)));
    }
    answers = [{ status: 409, body: status(409, 'AlreadyExists') }];
    assert.ok(!isConflict(await failure(core.readNode({ name: 'n' }))), 'AlreadyExists is not a Conflict');
  });

  it('a 401 carries no body, as with client-node', async () => {
    const { core } = createApiClients(kubeConfig(), unlimited);
    answers = [{ status: 401, body: status(401, 'Unauthorized') }];
    const err = await failure(core.readNode({ name: 'n1' }));
    assert.ok(isApiException(err));
    assert.equal(err.body, undefined);
    assert.deepEqual(apiErrorInfo(err), { code: 401, reason: '' });
  });

  it('a call that reaches no server fails with the transport error (code 0 for api-error.ts)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { core } = createApiClients({ getCurrentCluster: () => ({ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }), getCurrentUser: () => null }, unlimited);
    const err = await failure(core.readNode({ name: 'n1' }));
    assert.equal((err as { code?: unknown }).code, 'ECONNREFUSED');
    assert.ok(!isApiException(err));
    assert.deepEqual(apiErrorInfo(err), { code: 0, reason: '' });
  });
});
