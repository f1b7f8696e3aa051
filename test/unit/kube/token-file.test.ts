// A kubeconfig's token-file is read again each minute, so a projected ServiceAccount token
// that the kubelet rotates keeps working; an inline token wins over a file, as in client-node.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiClients } from '../../../src/kube/api-clients.js';
import { loadKubeConfigFile } from '../../../src/kube/kubeconfig-file.js';
import { createTokenBucket } from '../../../src/kube/rate-limiter.js';
import { TOKEN_FILE_REFRESH_MS, createTokenFile } from '../../../src/kube/token-file.js';

function kubeconfig(dir: string, server: string, user: Record<string, string>): string {
  const path = join(dir, 'kubeconfig');
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return path;
}

it('the token is read again once the refresh period has passed, not before', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-token-'));
  try {
    const path = join(dir, 'token');
    writeFileSync(path, 'first\n');
    let now = 1_000;
    const file = createTokenFile(path, () => now);
    assert.equal(await file.current(), 'first');
    writeFileSync(path, 'second');
    now += TOKEN_FILE_REFRESH_MS - 1;
    assert.equal(await file.current(), 'first');
    now += 1;
    assert.equal(await file.current(), 'second');
    // A file briefly missing (being replaced) keeps the last token.
    rmSync(path);
    now += TOKEN_FILE_REFRESH_MS;
    assert.equal(await file.current(), 'second');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('an unreadable token file is an error naming the file, never its content', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-token-'));
  try {
    const missing = join(dir, 'nope');
    await assert.rejects(createTokenFile(missing).current(), (err: Error) => err.message.includes(missing) && /token-file/.test(err.message));
    writeFileSync(join(dir, 'empty'), '  \n');
    await assert.rejects(createTokenFile(join(dir, 'empty')).current(), /is empty/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('a token-file is resolved against the kubeconfig folder; an inline token means no file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-token-'));
  try {
    writeFileSync(join(dir, 'token'), 't');
    const withFile = loadKubeConfigFile(kubeconfig(dir, 'http://127.0.0.1:1', { 'token-file': join(dir, 'token') }));
    assert.equal(withFile.tokenFile, join(dir, 'token'));
    const inline = loadKubeConfigFile(kubeconfig(dir, 'http://127.0.0.1:1', { token: 'x', 'token-file': join(dir, 'token') }));
    assert.equal(inline.tokenFile, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('the API clients send the token the file holds when they call, not the one read at load', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kp-token-'));
  const seen: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers.authorization);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"n1"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const tokenPath = join(dir, 'token');
    writeFileSync(tokenPath, 'at-load');
    const loaded = loadKubeConfigFile(kubeconfig(dir, `http://127.0.0.1:${(server.address() as { port: number }).port}`, { 'token-file': tokenPath }));
    writeFileSync(tokenPath, 'rotated');
    const apis = createApiClients(loaded.kubeConfig, createTokenBucket({ qps: 100, burst: 100 }), { tokenFile: loaded.tokenFile! });
    await apis.coordination.readNamespacedLease({ name: 'n1', namespace: 'kube-node-lease' });
    assert.deepEqual(seen, ['Bearer rotated']);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
