// Our kubeconfig reader (src/kube/kubeconfig.ts): the common kubeconfigs without client-node,
// the rest marked for client-node, and what it cannot use refused with the file and the field.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Agent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { hasErrorCode } from '../../../src/errors.js';
import { createClusterAccess } from '../../../src/kube/cluster-access.js';
import { loadKubeConfigFile } from '../../../src/kube/kubeconfig-file.js';
import { readKubeConfigFile } from '../../../src/kube/kubeconfig.js';
import { makeCA } from '../../helpers/certificates.js';
import { httpsGet } from '../../helpers/https-get.js';

const dir = mkdtempSync(join(tmpdir(), 'kp-kubeconfig-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Writes a kubeconfig with one context `ctx` → cluster `c`, user `u`; returns its path. */
function kubeconfig(cluster: Record<string, unknown>, user: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}): string {
  const sub = join(dir, `k${n++}`);
  mkdirSync(sub);
  const path = join(sub, 'config');
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'ctx',
    contexts: [{ name: 'other', context: { cluster: 'nope' } }, { name: 'ctx', context: { cluster: 'c', ...(user !== undefined ? { user: 'u' } : {}) } }],
    clusters: [{ name: 'c', cluster }],
    users: user !== undefined ? [{ name: 'u', user }] : [],
    ...extra,
  };
  writeFileSync(path, stringify(doc));
  return path;
}

const https = { server: 'https://127.0.0.1:6443/' };

/** The error's message, asserting it is the kubeconfig error. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_KUBECONFIG'), `not a kubeconfig error: ${String(err)}`);
    return (err as Error).message;
  }
  assert.fail('the kubeconfig was accepted');
}

describe('readKubeConfigFile', () => {
  it('reads a token user and a cluster with inline CA, in client-node shapes', () => {
    const path = kubeconfig({ ...https, 'certificate-authority-data': 'Q0E=', 'tls-server-name': 'api.local' }, { token: 'secret' });
    const kc = readKubeConfigFile(path);
    assert.deepEqual(kc.getCurrentCluster(), { name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false, caData: 'Q0E=', tlsServerName: 'api.local' });
    assert.deepEqual(kc.getCurrentUser(), { name: 'u', token: 'secret' });
    assert.equal(kc.getCurrentContext(), 'ctx');
    assert.equal(kc.needsClientNode, undefined);
    assert.equal(kc.tokenFile, undefined);
  });

  it('resolves files relative to the kubeconfig folder; a token-file is read again later, an inline token wins', () => {
    const path = kubeconfig({ ...https, 'certificate-authority': 'ca.crt' }, { 'token-file': 'token', 'client-certificate': 'tls/client.crt', 'client-key': '/abs/client.key' });
    writeFileSync(join(path, '..', 'token'), 'abc\n');
    const kc = readKubeConfigFile(path);
    const folder = join(path, '..');
    assert.equal(kc.getCurrentCluster().caFile, join(folder, 'ca.crt'));
    assert.equal(kc.getCurrentUser()?.certFile, join(folder, 'tls/client.crt'));
    assert.equal(kc.getCurrentUser()?.keyFile, '/abs/client.key');
    assert.equal(kc.tokenFile, join(folder, 'token'));
    assert.equal(loadKubeConfigFile(path).tokenFile, join(folder, 'token'));

    const inline = kubeconfig(https, { token: 'x', 'token-file': 'missing-is-fine-when-a-token-is-inline' });
    assert.equal(readKubeConfigFile(inline).tokenFile, undefined);
    assert.equal(loadKubeConfigFile(inline).tokenFile, undefined);
  });

  it('takes insecure-skip-tls-verify, basic auth and `as`, and a context without a user', () => {
    const kc = readKubeConfigFile(kubeconfig({ server: 'http://127.0.0.1:8080', 'insecure-skip-tls-verify': true }, { username: 'a', password: 'b', as: 'someone' }));
    assert.equal(kc.getCurrentCluster().skipTLSVerify, true);
    assert.deepEqual(kc.getCurrentUser(), { name: 'u', username: 'a', password: 'b', impersonateUser: 'someone' });
    assert.equal(readKubeConfigFile(kubeconfig(https, undefined)).getCurrentUser(), null);
  });

  it('marks exec plugins, auth providers and proxies for client-node, naming the field', () => {
    const exec = readKubeConfigFile(kubeconfig(https, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'get-token' } }));
    assert.equal(exec.needsClientNode, 'users[0].user.exec');
    assert.deepEqual(exec.getCurrentUser()?.exec, { apiVersion: 'client.authentication.k8s.io/v1', command: 'get-token' });
    assert.equal(readKubeConfigFile(kubeconfig(https, { 'auth-provider': { name: 'oidc' } })).needsClientNode, 'users[0].user.auth-provider');
    assert.equal(readKubeConfigFile(kubeconfig({ ...https, 'proxy-url': 'http://proxy:3128' }, { token: 't' })).needsClientNode, 'clusters[0].cluster.proxy-url');
    // And the clients then ask client-node for each request's credentials.
    assert.equal(createClusterAccess(exec).kind, 'client-node');
    assert.equal(createClusterAccess(readKubeConfigFile(kubeconfig(https, { token: 't' }))).kind, 'static');
  });

  it('refuses what it cannot use, naming the file and the field', () => {
    const cases: [string, () => string, RegExp][] = [
      ['no current context', () => kubeconfig(https, { token: 't' }, { 'current-context': '' }), /: current-context is not set/],
      ['an unknown context', () => kubeconfig(https, { token: 't' }, { 'current-context': 'gone' }), /: current-context names "gone", which is not an entry of contexts/],
      ['a context without a cluster', () => kubeconfig(https, { token: 't' }, { contexts: [{ name: 'ctx', context: { user: 'u' } }] }), /: contexts\[0\]\.context\.cluster is missing/],
      ['an unknown user', () => kubeconfig(https, { token: 't' }, { contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'who' } }] }), /: contexts\[0\]\.context\.user names "who", which is not an entry of users/],
      ['a cluster without a server', () => kubeconfig({ 'certificate-authority-data': 'x' }, { token: 't' }), /: clusters\[0\]\.cluster\.server is missing/],
      ['plain HTTP with TLS verification on', () => kubeconfig({ server: 'http://127.0.0.1:8080' }, { token: 't' }), /: clusters\[0\]\.cluster\.server "http:\/\/127\.0\.0\.1:8080" is plain HTTP, which needs insecure-skip-tls-verify: true/],
      ['a server that is not a URL', () => kubeconfig({ server: 'not a url' }, { token: 't' }), /: clusters\[0\]\.cluster\.server "not a url" is not a URL/],
      ['a certificate without its key', () => kubeconfig(https, { 'client-certificate-data': 'Y2VydA==' }), /: users\[0\]\.user\.client-key is missing: client-certificate-data needs its key/],
      ['a key without its certificate', () => kubeconfig(https, { 'client-key': 'k.pem' }), /: users\[0\]\.user\.client-certificate is missing: client-key needs its certificate/],
      ['a token file that cannot be read', () => kubeconfig(https, { 'token-file': 'no-such-token' }), /: users\[0\]\.user\.token-file \S+no-such-token cannot be read: ENOENT/],
      ['group impersonation', () => kubeconfig(https, { token: 't', 'as-groups': ['system:masters'] }), /: users\[0\]\.user\.as-groups is not supported/],
      ['a token that is not a string', () => kubeconfig(https, { token: 42 }), /: users\[0\]\.user\.token is not a string/],
    ];
    for (const [what, write, expected] of cases) {
      const path = write();
      const message = refusal(() => readKubeConfigFile(path));
      assert.ok(message.startsWith(`unusable kubeconfig: ${path}: `), `${what}: the file is not named first: ${message}`);
      assert.match(message, expected, what);
    }
    const missing = join(dir, 'no-such-kubeconfig');
    assert.match(refusal(() => readKubeConfigFile(missing)), new RegExp(`${missing} cannot be read: ENOENT`));
    const notYaml = join(dir, 'not-yaml');
    writeFileSync(notYaml, 'a: [1, 2\n');
    assert.match(refusal(() => readKubeConfigFile(notYaml)), /not-yaml is not YAML/);
  });

  it('names the file and field of a certificate that cannot be read at the first request, and tries again at the next', async () => {
    // A server on loopback signed by a CA of its own: the agent reaches it only with that CA.
    const ca = makeCA('kubeconfig-test-ca');
    const serving = ca.sign('localhost', [], 'server');
    const server = createServer({ cert: serving.cert, key: serving.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const path = kubeconfig({ server: `https://localhost:${port}/`, 'certificate-authority': 'ca.crt' }, { token: 't' });
      const access = createClusterAccess(readKubeConfigFile(path));
      const err = await access.prepare().then(
        () => assert.fail('prepared without its CA'),
        (e: unknown) => e,
      );
      assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_KUBECONFIG'));
      assert.match((err as Error).message, new RegExp(`${path}: certificate-authority \\S+ca\\.crt cannot be read: ENOENT`));
      writeFileSync(join(path, '..', 'ca.crt'), ca.cert);
      const prepared = await access.prepare();
      assert.equal(prepared.headers['Authorization'], 'Bearer t');
      const answer = await httpsGet(`https://localhost:${port}/`, { agent: prepared.agent as Agent });
      assert.equal(answer.body, 'ok', 'the agent trusts the CA read from the file');
      (prepared.agent as { destroy(): void }).destroy();
    } finally {
      server.close();
    }
  });
});
