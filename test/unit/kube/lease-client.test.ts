// The fleet's lean Lease client against an in-memory Lease API served over HTTPS on loopback,
// side by side with client-node's CoordinationV1Api on the same server: the same calls must give
// the same Leases and errors that src/kube/api-error.ts reads the same way, and the node lease
// must behave the same on top of it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { KubeConfig, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import { pino } from 'pino';
import { createApiClients, createConnectionPool, type LeaseApi } from '../../../src/kube/api-clients.js';
import { apiErrorInfo, apiFailureCause, isAlreadyExists, isConflict, isNotFound } from '../../../src/kube/api-error.js';
import { createLeaseClient } from '../../../src/kube/lease-client.js';
import { wasNotSent } from '../../../src/kube/api-transport.js';
import { isAbortError } from '../../../src/kube/request-timeout.js';
import { createTokenBucket, unlimited, type RateLimiter } from '../../../src/kube/rate-limiter.js';
import { createNodeLease, NODE_LEASE_NAMESPACE } from '../../../src/node/node-lease.js';
import { makeCA } from '../../helpers/certificates.js';

const TOKEN = 'lease-test-token-0123456789';
const PREFIX = '/apis/coordination.k8s.io/v1/namespaces/';

/** Leases by namespace/name with resourceVersion checks, as the API server answers them. */
class FakeLeaseServer {
  readonly leases = new Map<string, V1Lease>();
  readonly requests: { method: string; path: string; contentType: string | undefined }[] = [];
  readonly userAgents: (string | undefined)[] = [];
  /** Answers this many requests with 429 and Retry-After: 1 first (API priority and fairness shedding). */
  throttle = 0;
  /** Leaves requests for this Lease name unanswered (a half-open connection, a stuck server). */
  hangOn: string | undefined;
  #rv = 100;
  #server: Server | undefined;
  readonly ca = makeCA('lease-test-ca');

  async start(): Promise<number> {
    const serving = this.ca.sign('localhost', [], 'server');
    this.#server = createServer({ cert: serving.cert, key: serving.key }, (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', contentType: req.headers['content-type'] });
        this.userAgents.push(req.headers['user-agent']);
        if (this.hangOn !== undefined && (req.url ?? '').endsWith(`/${this.hangOn}`)) return;
        if (this.throttle > 0) {
          this.throttle--;
          res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
          res.end(JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'TooManyRequests', code: 429 }));
          return;
        }
        const [status, out] = this.#handle(req.method ?? '', req.url ?? '', req.headers.authorization, body);
        res.writeHead(status, { 'content-type': 'application/json', 'audit-id': 'a1' });
        res.end(JSON.stringify(out));
      });
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return (this.#server!.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    this.#server?.closeAllConnections();
    return new Promise((resolve) => this.#server?.close(() => resolve()));
  }

  #status(code: number, reason: string, message: string): [number, object] {
    return [code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, reason, code }];
  }

  #handle(method: string, url: string, authorization: string | undefined, body: string): [number, object] {
    if (authorization !== `Bearer ${TOKEN}`) return this.#status(401, 'Unauthorized', 'Unauthorized');
    const [namespace, kind, name] = url.slice(PREFIX.length).split('/');
    if (!url.startsWith(PREFIX) || kind !== 'leases') return this.#status(404, 'NotFound', 'the server could not find the requested resource');
    const key = `${namespace}/${name ?? ''}`;
    const existing = this.leases.get(key);
    if (method === 'GET') return existing ? [200, existing] : this.#status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
    const lease = JSON.parse(body) as V1Lease;
    const stored = (): V1Lease => ({ ...lease, metadata: { ...lease.metadata, namespace, resourceVersion: String(++this.#rv), creationTimestamp: existing?.metadata?.creationTimestamp ?? ('2026-05-01T12:00:00Z' as never) } });
    if (method === 'POST') {
      const newKey = `${namespace}/${lease.metadata?.name}`;
      if (this.leases.has(newKey)) return this.#status(409, 'AlreadyExists', `leases.coordination.k8s.io "${lease.metadata?.name}" already exists`);
      this.leases.set(newKey, stored());
      return [201, this.leases.get(newKey)!];
    }
    if (method === 'PUT') {
      if (!existing) return this.#status(404, 'NotFound', `leases.coordination.k8s.io "${name}" not found`);
      if (lease.metadata?.resourceVersion !== existing.metadata?.resourceVersion) {
        return this.#status(409, 'Conflict', `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified`);
      }
      this.leases.set(key, stored());
      return [200, this.leases.get(key)!];
    }
    return this.#status(405, 'MethodNotAllowed', 'method not allowed');
  }
}

function kubeConfigFor(port: number, ca: string, token = TOKEN): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(ca).toString('base64'), tlsServerName: 'localhost' }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

const leaseBody = (name: string): V1Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: NODE_LEASE_NAMESPACE },
  spec: { holderIdentity: name, leaseDurationSeconds: 40 },
});

/** What a caller can see of a call: the Lease as JSON, or the error as api-error.ts reads it. */
async function outcome(call: Promise<V1Lease>): Promise<unknown> {
  try {
    const lease = JSON.parse(JSON.stringify(await call)) as V1Lease;
    return { lease: { name: lease.metadata?.name, rv: lease.metadata?.resourceVersion, spec: lease.spec } };
  } catch (err) {
    return { error: apiErrorInfo(err), notFound: isNotFound(err), conflict: isConflict(err), exists: isAlreadyExists(err), cause: String(apiFailureCause(err)) };
  }
}

describe('createLeaseClient', () => {
  const server = new FakeLeaseServer();
  let port = 0;
  before(async () => {
    port = await server.start();
  });
  after(() => server.stop());

  const clients = (token = TOKEN, limiter: RateLimiter = unlimited): { lean: LeaseApi; typed: LeaseApi } => {
    const pool = createConnectionPool();
    const kc = kubeConfigFor(port, server.ca.cert, token);
    const lean = createLeaseClient(kc, limiter, { pool });
    assert.ok(lean, 'a token kubeconfig over https gets the lean client');
    return { lean, typed: createApiClients(kc, limiter, { pool }).coordination };
  };

  it('gives the same Leases and the same errors as client-node, call by call', async () => {
    const { lean, typed } = clients();
    // Each client runs the same script on its own Lease; the resourceVersions differ, so they are compared by step.
    const script = async (api: LeaseApi, name: string): Promise<unknown[]> => {
      const steps: unknown[] = [];
      steps.push(await outcome(api.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE })));
      steps.push(await outcome(api.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: leaseBody(name) })));
      steps.push(await outcome(api.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: leaseBody(name) })));
      const read = await api.readNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE });
      const renewed = { ...read, spec: { ...read.spec, renewTime: new V1MicroTime(Date.parse('2026-05-01T12:00:10.5Z')) } };
      steps.push(await outcome(api.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: renewed })));
      // The same base again: its resourceVersion is stale now.
      steps.push(await outcome(api.replaceNamespacedLease({ name, namespace: NODE_LEASE_NAMESPACE, body: renewed })));
      steps.push(await outcome(api.replaceNamespacedLease({ name: `${name}-gone`, namespace: NODE_LEASE_NAMESPACE, body: { ...leaseBody(`${name}-gone`), metadata: { name: `${name}-gone`, resourceVersion: '1' } } })));
      return steps.map((s) => JSON.parse(JSON.stringify(s).replaceAll(name, '<node>').replace(/"rv":"\d+"/g, '"rv":"n"')));
    };
    const fromLean = await script(lean, 'lean-node');
    const fromTyped = await script(typed, 'typed-node');
    assert.deepEqual(fromLean, fromTyped);
    // And the script meant what it says: a 404, a create, AlreadyExists, a renewal, a conflict, a 404.
    assert.deepEqual(
      fromLean.map((s) => ((s as { error?: { code: number; reason: string } }).error ? `${(s as { error: { code: number; reason: string } }).error.code} ${(s as { error: { reason: string } }).error.reason}` : 'ok')),
      ['404 NotFound', 'ok', '409 AlreadyExists', 'ok', '409 Conflict', '404 NotFound'],
    );
    // A MicroTime renewTime keeps its six digits on the wire.
    assert.equal(server.leases.get(`${NODE_LEASE_NAMESPACE}/lean-node`)?.spec?.renewTime, '2026-05-01T12:00:10.500000Z' as never);
  });

  it('sends JSON to the Lease paths, without waiting for the rate limiter (a heartbeat); other calls wait', async () => {
    let acquired = 0;
    const counting: RateLimiter = { acquire: () => ((acquired += 1), Promise.resolve()) };
    const { lean } = clients(TOKEN, counting);
    server.requests.length = 0;
    await lean.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: leaseBody('paths-node') });
    await lean.readNamespacedLease({ name: 'paths-node', namespace: NODE_LEASE_NAMESPACE });
    assert.equal(acquired, 0, "the kubelet's heartbeat client has no client-side throttling");
    // A Lease outside kube-node-lease is no heartbeat: it takes a token.
    await outcome(lean.readNamespacedLease({ name: 'other', namespace: 'default' }));
    assert.equal(acquired, 1);
    server.requests.pop();
    assert.deepEqual(server.requests, [
      { method: 'POST', path: `${PREFIX}kube-node-lease/leases`, contentType: 'application/json' },
      { method: 'GET', path: `${PREFIX}kube-node-lease/leases/paths-node`, contentType: undefined },
    ]);
  });

  it('a refused token fails as client-node fails (401, no body), and nothing printed carries the token', async () => {
    const badToken = 'wrong-token-which-must-not-leak';
    const { lean, typed } = clients(badToken);
    const leanOutcome = await outcome(lean.readNamespacedLease({ name: 'x', namespace: NODE_LEASE_NAMESPACE }));
    assert.deepEqual(leanOutcome, await outcome(typed.readNamespacedLease({ name: 'x', namespace: NODE_LEASE_NAMESPACE })));
    assert.equal((leanOutcome as { error: { code: number } }).error.code, 401);

    // What the node lease logs of it, through a real pino logger.
    const lines: string[] = [];
    const logger = pino({ base: undefined }, new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const lease = createNodeLease({ nodeName: 'auth-node', api: lean, logger });
    assert.equal(await lease.syncNow(), false);
    const printed = lines.join('');
    assert.match(printed, /HTTP 401/);
    assert.ok(!printed.includes(badToken), 'the token is not logged');
    await assert.rejects(lean.readNamespacedLease({ name: 'x', namespace: NODE_LEASE_NAMESPACE }), (err: Error) => !err.message.includes(badToken) && !String(err.stack).includes(badToken));
  });

  it('under the node lease: creates, renews from its copy, and after a conflict reads it and renews in one attempt', async () => {
    const { lean } = clients(TOKEN, createTokenBucket({ qps: 50, burst: 10 }));
    const lease = createNodeLease({ nodeName: 'renew-node', api: lean, holderIdentity: 'renew-node' });
    assert.equal(await lease.syncNow(), true);
    const key = `${NODE_LEASE_NAMESPACE}/renew-node`;
    const first = server.leases.get(key)!;
    assert.equal(first.spec?.holderIdentity, 'renew-node');
    server.requests.length = 0;
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(server.requests.map((r) => r.method), ['PUT'], 'a renewal is one PUT from the cached copy');
    assert.notEqual(server.leases.get(key)!.metadata?.resourceVersion, first.metadata?.resourceVersion);

    // Someone else writes the Lease: the next renewal conflicts, reads it fresh and renews.
    const current = server.leases.get(key)!;
    server.leases.set(key, { ...current, metadata: { ...current.metadata, resourceVersion: '999999' } });
    server.requests.length = 0;
    assert.equal(await lease.syncNow(), true);
    assert.deepEqual(server.requests.map((r) => r.method), ['PUT', 'GET', 'PUT']);
  });

  it('waits out a 429 with Retry-After as the typed clients do, and sends the User-Agent and a token file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-lease-token-'));
    try {
      const tokenPath = join(dir, 'token');
      await writeFile(tokenPath, `${TOKEN}\n`);
      const kc = kubeConfigFor(port, server.ca.cert, 'stale-token-in-the-kubeconfig');
      const waits: number[] = [];
      const lean = createLeaseClient(kc, unlimited, { tokenFile: tokenPath, userAgent: 'kubelet-pods/fleet', sleep: async (ms) => void waits.push(ms) })!;
      server.throttle = 2;
      server.userAgents.length = 0;
      const lease = await lean.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: leaseBody('throttled-node') });
      assert.equal(lease.metadata?.name, 'throttled-node');
      assert.deepEqual(waits, [1000, 1000], 'two 429s, each waited out for its Retry-After');
      assert.deepEqual(server.userAgents, ['kubelet-pods/fleet', 'kubelet-pods/fleet', 'kubelet-pods/fleet']);
    } finally {
      server.throttle = 0;
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a call with no answer fails at its deadline as the typed clients\' do, and a later call goes through', async () => {
    const lean = createLeaseClient(kubeConfigFor(port, server.ca.cert), unlimited, { timeoutMs: 300 })!;
    server.hangOn = 'stuck-node';
    const started = performance.now();
    await assert.rejects(lean.readNamespacedLease({ name: 'stuck-node', namespace: NODE_LEASE_NAMESPACE }), (err: unknown) => isAbortError(err) && String(apiFailureCause(err)).includes('request timeout'));
    assert.ok(performance.now() - started >= 290, 'not before its deadline');
    server.hangOn = undefined;
    await lean.createNamespacedLease({ namespace: NODE_LEASE_NAMESPACE, body: leaseBody('after-stuck') });
  });

  it('tells a call abandoned in flight from one that never left its queue for a connection', async () => {
    // Two clients on one pool of one connection: the queued call's deadline comes well before
    // the one holding the connection gives it up, so the order cannot race.
    const pool = createConnectionPool(1);
    const kc = kubeConfigFor(port, server.ca.cert);
    const holder = createLeaseClient(kc, unlimited, { timeoutMs: 900, pool })!;
    const waiter = createLeaseClient(kc, unlimited, { timeoutMs: 300, pool })!;
    server.hangOn = 'stuck-node';
    try {
      const [inFlight, queued] = await Promise.allSettled([
        holder.readNamespacedLease({ name: 'stuck-node', namespace: NODE_LEASE_NAMESPACE }),
        waiter.readNamespacedLease({ name: 'queued-node', namespace: NODE_LEASE_NAMESPACE }),
      ]);
      assert.ok(inFlight.status === 'rejected' && isAbortError(inFlight.reason));
      assert.equal(wasNotSent(inFlight.reason), false, 'sent: the server may have acted on it');
      assert.ok(queued.status === 'rejected' && isAbortError(queued.reason));
      assert.equal(wasNotSent(queued.reason), true, 'the only connection was taken past the deadline');
    } finally {
      server.hangOn = undefined;
    }
  });

  it('leaves to client-node what it does not do: credentials that can change, proxies, plain http', () => {
    const base = kubeConfigFor(1, 'unused');
    const exec = kubeConfigFor(1, 'unused');
    exec.users = [{ name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'true', args: [], interactiveMode: 'Never' } }] as never;
    const proxied = kubeConfigFor(1, 'unused');
    proxied.clusters = [{ ...proxied.clusters[0]!, proxyUrl: 'http://127.0.0.1:3128' }];
    const plain = kubeConfigFor(1, 'unused');
    plain.clusters = [{ ...plain.clusters[0]!, server: 'http://127.0.0.1:8080', skipTLSVerify: true }];
    assert.ok(createLeaseClient(base, unlimited));
    for (const kc of [exec, proxied, plain]) assert.equal(createLeaseClient(kc, unlimited), undefined);
  });
});
