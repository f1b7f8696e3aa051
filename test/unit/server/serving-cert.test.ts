// The kubelet port's TLS material: a self-signed certificate like the kubelet's own
// (pkg/kubelet/certificate, cert.GenerateSelfSignedCertKey), or the given files, checked.
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import { loadServingTLS, selfSignedCertificate } from '../../../src/server/serving-cert.js';
import { makeCA } from '../../helpers/certificates.js';

describe('serving certificate', () => {
  const dirs: string[] = [];
  after(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('self-signed: CN <node>@<seconds>, names the node, localhost and its addresses, for server auth, valid for a year', () => {
    const now = new Date('2026-03-04T05:06:07Z');
    const { cert, key } = selfSignedCertificate('node-a', ['10.1.2.3', '0.0.0.0'], now);
    const x = new X509Certificate(cert);
    assert.equal(x.subject, `CN=node-a@${Math.floor(now.getTime() / 1000)}`);
    assert.equal(x.issuer, x.subject);
    assert.equal(x.subjectAltName, 'DNS:node-a, DNS:localhost, IP Address:10.1.2.3, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.ok(x.checkPrivateKey(createPrivateKey(key)));
    assert.equal(new Date(x.validTo).getTime() - now.getTime(), 365 * 24 * 3600 * 1000);
  });

  it('given files: used as they are; a key of another certificate, an unreadable file or a bad CA is KP_ERR_SERVER_TLS', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-cert-'));
    dirs.push(dir);
    const ca = makeCA('ca');
    const a = ca.sign('node-a', [], 'server');
    const b = ca.sign('node-b', [], 'server');
    const file = async (name: string, text: string) => {
      await writeFile(join(dir, name), text);
      return join(dir, name);
    };
    const certFile = await file('a.crt', a.cert);
    const keyFile = await file('a.key', a.key);
    const caFile = await file('ca.crt', ca.cert);
    const tls = await loadServingTLS({ certFile, keyFile, clientCAFile: caFile, nodeName: 'node-a', addresses: [] });
    assert.deepEqual(tls, { cert: a.cert, key: a.key, clientCA: ca.cert });
    const otherKey = await file('b.key', b.key);
    await assert.rejects(loadServingTLS({ certFile, keyFile: otherKey, nodeName: 'n', addresses: [] }), (err: unknown) =>
      hasErrorCode(err, 'KP_ERR_SERVER_TLS') && err.message.includes('does not belong'));
    await assert.rejects(loadServingTLS({ certFile: join(dir, 'missing'), keyFile, nodeName: 'n', addresses: [] }), (err: unknown) =>
      hasErrorCode(err, 'KP_ERR_SERVER_TLS') && err.message.includes('tlsCertFile cannot be read'));
    await assert.rejects(loadServingTLS({ clientCAFile: keyFile, nodeName: 'n', addresses: [] }), (err: unknown) => hasErrorCode(err, 'KP_ERR_SERVER_TLS'));
  });
});
