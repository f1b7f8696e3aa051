// Certificates for tests of the kubelet port: a CA and client certificates it signs (CN the
// user, O the groups), made with node:crypto keys and node-forge, as src/server/serving-cert.ts.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface TestCertificate {
  readonly cert: string;
  readonly key: string;
}

function keyPair(): { forgeKey: forge.pki.rsa.PrivateKey; publicKey: forge.pki.rsa.PublicKey; pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  return {
    forgeKey: forge.pki.privateKeyFromPem(pem),
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    pem,
  };
}

function baseCertificate(publicKey: forge.pki.rsa.PublicKey): forge.pki.Certificate {
  const c = forge.pki.createCertificate();
  c.publicKey = publicKey;
  const serial = randomBytes(12);
  serial[0] = serial[0]! & 0x7f;
  c.serialNumber = serial.toString('hex');
  c.validity.notBefore = new Date(Date.now() - 3600_000);
  c.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  return c;
}

export function makeCA(name: string): TestCertificate & { sign(cn: string, groups?: readonly string[], usage?: 'client' | 'server'): TestCertificate } {
  const ca = keyPair();
  const c = baseCertificate(ca.publicKey);
  const subject = [{ name: 'commonName', value: name, valueTagClass: forge.asn1.Type.UTF8 as never }];
  c.setSubject(subject);
  c.setIssuer(subject);
  c.setExtensions([{ name: 'basicConstraints', cA: true }, { name: 'keyUsage', keyCertSign: true, digitalSignature: true }]);
  c.sign(ca.forgeKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(c),
    key: ca.pem,
    sign(cn, groups = [], usage = 'client') {
      const leaf = keyPair();
      const l = baseCertificate(leaf.publicKey);
      // UTF8String: `:` (system:masters) is not a PrintableString character.
      const utf8 = forge.asn1.Type.UTF8 as never;
      l.setSubject([{ name: 'commonName', value: cn, valueTagClass: utf8 }, ...groups.map((g) => ({ name: 'organizationName', value: g, valueTagClass: utf8 }))]);
      l.setIssuer(subject);
      l.setExtensions([
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', clientAuth: usage === 'client', serverAuth: usage === 'server' },
      ]);
      l.sign(ca.forgeKey, forge.md.sha256.create());
      return { cert: forge.pki.certificateToPem(l), key: leaf.pem };
    },
  };
}
