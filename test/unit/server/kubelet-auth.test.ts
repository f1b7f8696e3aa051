// The kubelet port's authentication and authorization (the kubelet's
// pkg/kubelet/server/server.go InstallAuthFilter and pkg/kubelet/server/auth.go), on a real
// HTTPS server on loopback with fake TokenReview and SubjectAccessReview clients.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { AuthenticationV1Api, AuthorizationV1Api, V1SubjectAccessReview, V1TokenReview } from '@kubernetes/client-node';
import { createKubeletAuth, type KubeletAuthOptions } from '../../../src/server/kubelet-auth.js';
import { createAgentServer, send, type AgentServer } from '../../../src/server/server.js';
import { selfSignedCertificate } from '../../../src/server/serving-cert.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { makeCA, type TestCertificate } from '../../helpers/certificates.js';

const NODE = 'node-a';
const ca = makeCA('test-client-ca');
const otherCA = makeCA('other-ca');
const serving = selfSignedCertificate(NODE, ['127.0.0.1'], new Date());

/** A TokenReview fake: `tokens` maps a token to its user; it counts its calls. */
function fakeTokenReviews(tokens: Record<string, { username: string; groups?: string[]; uid?: string }>) {
  const calls: V1TokenReview[] = [];
  const api: Pick<AuthenticationV1Api, 'createTokenReview'> = {
    createTokenReview: async ({ body }: { body: V1TokenReview }) => {
      calls.push(body);
      const user = tokens[body.spec.token ?? ''];
      return { ...body, status: user ? { authenticated: true, user } : { authenticated: false } };
    },
  } as never;
  return { api, calls };
}

/** A SubjectAccessReview fake allowing `user` exactly the listed `verb nodes/subresource name`. */
function fakeAccessReviews(grants: Record<string, string[]>, fail = false) {
  const calls: V1SubjectAccessReview[] = [];
  const api: Pick<AuthorizationV1Api, 'createSubjectAccessReview'> = {
    createSubjectAccessReview: async ({ body }: { body: V1SubjectAccessReview }) => {
      calls.push(body);
      if (fail) throw Object.assign(new Error('HTTP 503'), { code: 503, body: '{"reason":"ServiceUnavailable"}' });
      const a = body.spec.resourceAttributes!;
      const allowed = (grants[body.spec.user ?? ''] ?? []).includes(`${a.verb} ${a.resource}/${a.subresource} ${a.name}`);
      return { ...body, status: { allowed } };
    },
  } as never;
  return { api, calls };
}

interface Answer {
  status: number;
  body: string;
}

function get(port: number, path: string, options: { token?: string; client?: TestCertificate; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'GET',
        rejectUnauthorized: false,
        ...(options.token !== undefined ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
        ...(options.client !== undefined ? { cert: options.client.cert, key: options.client.key } : {}),
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function serve(options: Omit<KubeletAuthOptions, 'nodeName'>, clientCA = true): Promise<{ server: AgentServer; port: number }> {
  const server = createAgentServer({
    tls: { ...serving, ...(clientCA ? { clientCA: ca.cert } : {}) },
    guard: createKubeletAuth({ nodeName: NODE, ...options }),
    routes: [
      { path: '/pods', handle: (_req, res) => send(res, 200, 'text/plain', 'pods') },
      { path: '/metrics', handle: (_req, res) => send(res, 200, 'text/plain', 'metrics') },
    ],
  });
  const { port } = await server.listen();
  return { server, port };
}

describe('kubelet port authentication and authorization', () => {
  const servers: AgentServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const start = async (options: Omit<KubeletAuthOptions, 'nodeName'>, clientCA = true): Promise<number> => {
    const { server, port } = await serve(options, clientCA);
    servers.push(server);
    return port;
  };

  describe('Webhook mode, anonymous off (the config file defaults)', () => {
    const tokens = fakeTokenReviews({ 'admin-token': { username: 'admin', groups: ['system:masters'] }, 'viewer-token': { username: 'viewer', uid: 'u-1' } });
    const sars = fakeAccessReviews({
      admin: ['get nodes/proxy node-a', 'get nodes/metrics node-a'],
      viewer: ['get nodes/metrics node-a'],
      'system:kube-apiserver': ['get nodes/pods node-a'],
    });
    const clock = new FakeClock();
    let port: number;
    before(async () => {
      port = await start({ x509: true, tokenReviews: tokens.api, anonymous: false, authorization: sars.api, clock });
    });

    it('no credentials: 401 Unauthorized', async () => {
      assert.deepEqual(await get(port, '/pods'), { status: 401, body: 'Unauthorized' });
    });

    it('a bearer token the TokenReview accepts, allowed by a SubjectAccessReview on nodes/metrics: 200', async () => {
      assert.deepEqual(await get(port, '/metrics', { token: 'viewer-token' }), { status: 200, body: 'metrics' });
      const review = sars.calls.at(-1)!;
      assert.deepEqual(review.spec, {
        user: 'viewer',
        uid: 'u-1',
        groups: [],
        resourceAttributes: { verb: 'get', group: '', version: 'v1', resource: 'nodes', subresource: 'metrics', name: NODE },
      });
    });

    it('/pods tries nodes/pods, then nodes/proxy; refused by both: 403 naming the user, verb and subresources', async () => {
      const before = sars.calls.length;
      const answer = await get(port, '/pods', { token: 'viewer-token' });
      assert.equal(answer.status, 403);
      assert.equal(answer.body, 'Forbidden (user=viewer, verb=get, resource=nodes, subresource(s)=[pods proxy])\n');
      assert.deepEqual(sars.calls.slice(before).map((c) => c.spec.resourceAttributes?.subresource), ['pods', 'proxy']);
    });

    it('/pods allowed through nodes/proxy', async () => {
      assert.deepEqual(await get(port, '/pods', { token: 'admin-token' }), { status: 200, body: 'pods' });
    });

    it('a token the TokenReview rejects: 401, even though it looks like a token', async () => {
      assert.equal((await get(port, '/pods', { token: 'wrong' })).status, 401);
    });

    it('answers are cached: the same token and request again sends no review; after the TTLs they are asked again', async () => {
      await get(port, '/metrics', { token: 'viewer-token' });
      const t = tokens.calls.length;
      const s = sars.calls.length;
      assert.equal((await get(port, '/metrics', { token: 'viewer-token' })).status, 200);
      assert.equal(tokens.calls.length, t, 'no second TokenReview');
      assert.equal(sars.calls.length, s, 'no second SubjectAccessReview');
      await clock.advance(300_001);
      assert.equal((await get(port, '/metrics', { token: 'viewer-token' })).status, 200);
      assert.equal(tokens.calls.length, t + 1);
      assert.equal(sars.calls.length, s + 1);
    });

    it('a client certificate from the client CA: its CN is the user, its O the groups', async () => {
      const client = ca.sign('system:kube-apiserver', ['system:masters', 'other']);
      assert.deepEqual(await get(port, '/pods', { client }), { status: 200, body: 'pods' });
      assert.deepEqual(sars.calls.at(-1)!.spec.groups, ['system:masters', 'other']);
      assert.equal(sars.calls.at(-1)!.spec.user, 'system:kube-apiserver');
    });

    it('a client certificate from another CA, or not for client auth: 401, even with a good token', async () => {
      assert.equal((await get(port, '/pods', { client: otherCA.sign('admin') })).status, 401);
      assert.equal((await get(port, '/pods', { client: otherCA.sign('admin'), token: 'admin-token' })).status, 401);
      assert.equal((await get(port, '/pods', { client: ca.sign('admin', [], 'server') })).status, 401);
    });

    it('an unknown path is refused before it is found (401 without credentials, 404 once allowed)', async () => {
      assert.equal((await get(port, '/nothing')).status, 401);
      assert.equal((await get(port, '/nothing', { token: 'admin-token' })).status, 404);
    });
  });

  it('anonymous on: requests without credentials are system:anonymous in system:unauthenticated', async () => {
    const sars = fakeAccessReviews({ 'system:anonymous': ['get nodes/healthz node-a'] });
    const port = await start({ x509: false, anonymous: true, authorization: sars.api }, false);
    assert.equal((await get(port, '/pods')).status, 403);
    assert.deepEqual(sars.calls[0]!.spec.groups, ['system:unauthenticated']);
    assert.equal(sars.calls[0]!.spec.user, 'system:anonymous');
  });

  it('flags-only defaults (anonymous, AlwaysAllow, no token webhook): everything is allowed, a bearer header is not looked at', async () => {
    const port = await start({ x509: false, anonymous: true, authorization: 'AlwaysAllow' }, false);
    assert.deepEqual(await get(port, '/pods'), { status: 200, body: 'pods' });
    assert.deepEqual(await get(port, '/pods', { token: 'anything' }), { status: 200, body: 'pods' });
  });

  it('a SubjectAccessReview that fails: 500 Authorization error, logged without the token', async () => {
    const tokens = fakeTokenReviews({ t: { username: 'u' } });
    const lines: string[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: (o: object, m: string) => lines.push(JSON.stringify({ ...o, msg: m })), error: () => {} };
    const port = await start({ x509: false, anonymous: false, tokenReviews: tokens.api, authorization: fakeAccessReviews({}, true).api, logger });
    const answer = await get(port, '/metrics', { token: 't' });
    assert.equal(answer.status, 500);
    assert.equal(answer.body, 'Authorization error (user=u, verb=get, resource=nodes, subresource=metrics)');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /KP_ERR_SERVER_AUTHZ/);
    assert.ok(!lines[0]!.includes('"t"') && !lines[0]!.includes('Bearer'), lines[0]);
  });
});
