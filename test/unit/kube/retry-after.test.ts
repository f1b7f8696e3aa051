// Answers that ask to be retried (429, or a 5xx with Retry-After) are sent again after the
// seconds asked, up to 10 times, as client-go does; anything else reaches the caller at once.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { apiErrorInfo } from '../../../src/kube/api-error.js';
import { isApiException } from '../../../src/kube/api-exception.js';
import { createApiTransport, type ApiTransportOptions } from '../../../src/kube/api-transport.js';
import { createClusterAccess } from '../../../src/kube/cluster-access.js';
import { createTokenBucket, unlimited } from '../../../src/kube/rate-limiter.js';
import { retryAfterSeconds } from '../../../src/kube/retry-after.js';

const LEASE = '{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"n1"}}';

/** A server that gives the scripted answers in turn, then 200 with a Lease. */
async function scripted(answers: { status: number; retryAfter?: string }[]): Promise<{ url: string; hits: () => number; close: () => void }> {
  let hits = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = answers[hits++];
    req.resume();
    if (answer === undefined) return void res.writeHead(200, { 'content-type': 'application/json' }).end(LEASE);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (answer.retryAfter !== undefined) headers['retry-after'] = answer.retryAfter;
    res.writeHead(answer.status, headers).end(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":${answer.status},"reason":"TooManyRequests"}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, hits: () => hits, close: () => server.close() };
}

/** Our transport to that server, with a token (plain HTTP: TLS verification off, as a kubeconfig must say). */
function transportTo(url: string, options: Partial<ApiTransportOptions> = {}) {
  const access = createClusterAccess({ getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: true }), getCurrentUser: () => ({ name: 'u', token: 't' }) });
  return createApiTransport(access, { limiter: unlimited, ...options });
}

/** The call's failure: the refused answer, as an ApiException. */
const failure = (call: Promise<unknown>): Promise<unknown> => call.then(() => assert.fail('the call succeeded'), (err: unknown) => err);

it('only 429 and 5xx answers with whole seconds in Retry-After are retried', () => {
  assert.equal(retryAfterSeconds(429, '1'), 1);
  assert.equal(retryAfterSeconds(503, ' 2 '), 2);
  assert.equal(retryAfterSeconds(429, undefined), undefined);
  assert.equal(retryAfterSeconds(500, 'Wed, 21 Oct 2015 07:28:00 GMT'), undefined);
  assert.equal(retryAfterSeconds(409, '1'), undefined);
  assert.equal(retryAfterSeconds(200, '1'), undefined);
});

it('waits the seconds asked between attempts and returns the first answer not to retry', async () => {
  const server = await scripted([{ status: 429, retryAfter: '1' }, { status: 503, retryAfter: '3' }]);
  try {
    const waits: number[] = [];
    const lease = await transportTo(server.url, { sleep: async (ms: number) => void waits.push(ms) }).call<{ metadata?: { name?: string } }>({ method: 'GET', path: '/x' });
    assert.equal(lease.metadata?.name, 'n1');
    assert.deepEqual(waits, [1000, 3000]);
    assert.equal(server.hits(), 3);
  } finally {
    server.close();
  }
});

it('gives up after the retries allowed, and never retries a 500 without Retry-After', async () => {
  const server = await scripted(Array.from({ length: 5 }, () => ({ status: 429, retryAfter: '0' })));
  try {
    const err = await failure(transportTo(server.url, { maxRetries: 2, sleep: async () => undefined }).call({ method: 'POST', path: '/x', body: {} }));
    assert.ok(isApiException(err));
    assert.deepEqual(apiErrorInfo(err), { code: 429, reason: 'TooManyRequests' });
    assert.equal(server.hits(), 3, 'the first attempt and two retries');
    assert.match(String(err.body), /TooManyRequests/);
  } finally {
    server.close();
  }
  const plain = await scripted([{ status: 500 }]);
  try {
    const err = await failure(transportTo(plain.url, { sleep: async () => assert.fail('no wait') }).call({ method: 'GET', path: '/x' }));
    assert.equal(apiErrorInfo(err).code, 500);
    assert.equal(plain.hits(), 1);
  } finally {
    plain.close();
  }
});

it('a passed deadline ends the waiting with the refused answer', async () => {
  const server = await scripted([{ status: 429, retryAfter: '1' }]);
  try {
    const transport = transportTo(server.url, { timeouts: { heartbeatMs: 50, otherMs: 50 }, sleep: (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 150))) });
    const err = await failure(transport.call({ method: 'GET', path: '/x' }));
    assert.ok(isApiException(err));
    assert.equal(err.code, 429);
    assert.match(String(err.body), /TooManyRequests/);
    assert.equal(server.hits(), 1);
  } finally {
    server.close();
  }
});

it('the typed API clients retry a throttled call instead of failing it', async () => {
  const server = await scripted([{ status: 429, retryAfter: '0' }, { status: 429, retryAfter: '0' }]);
  try {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const apis = createApiClients(kc, createTokenBucket({ qps: 100, burst: 100 }));
    const lease = await apis.coordination.readNamespacedLease({ name: 'n1', namespace: 'kube-node-lease' });
    assert.equal(lease.metadata?.name, 'n1');
    assert.equal(server.hits(), 3);
  } finally {
    server.close();
  }
});
