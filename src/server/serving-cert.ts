import { generateKeyPairSync, randomBytes, X509Certificate, createPrivateKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import forge from 'node-forge';
import { kpError } from '../errors.js';
import type { ServerTLS } from './server.js';

export interface ServingCertOptions {
  /** `tlsCertFile` and `tlsPrivateKeyFile`: both, or neither for a self-signed certificate. */
  certFile?: string;
  keyFile?: string;
  /** `authentication.x509.clientCAFile`. */
  clientCAFile?: string;
  /** The self-signed certificate's names: the node name, and its addresses. */
  nodeName: string;
  addresses: readonly string[];
  /** When the self-signed certificate is made; now by default. */
  now?: Date;
}

/** A self-signed certificate is good for a year, as the kubelet's own. */
const SELF_SIGNED_VALIDITY_MS = 365 * 24 * 3600 * 1000;

/**
 * The kubelet port's TLS material: the given certificate and key, checked to match, or, as the
 * kubelet does without them, a self-signed certificate for the node's name and addresses
 * (made in memory at each start; the API server does not verify kubelet serving certificates
 * unless told to with --kubelet-certificate-authority). Failures are `KP_ERR_SERVER_TLS`.
 */
export async function loadServingTLS(options: ServingCertOptions): Promise<ServerTLS> {
  const clientCA = options.clientCAFile !== undefined ? await readPem(options.clientCAFile, 'authentication.x509.clientCAFile') : undefined;
  if (clientCA !== undefined) {
    try {
      new X509Certificate(clientCA);
    } catch (err) {
      throw kpError('KP_ERR_SERVER_TLS', [options.clientCAFile!, 'not a PEM certificate'], { cause: err });
    }
  }
  let cert: string;
  let key: string;
  if (options.certFile !== undefined && options.keyFile !== undefined) {
    cert = await readPem(options.certFile, 'tlsCertFile');
    key = await readPem(options.keyFile, 'tlsPrivateKeyFile');
    try {
      if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
        throw kpError('KP_ERR_SERVER_TLS', [options.keyFile, `the key does not belong to the certificate in ${JSON.stringify(options.certFile)}`]);
      }
    } catch (err) {
      if (err instanceof Error && 'code' in err && err.code === 'KP_ERR_SERVER_TLS') throw err;
      throw kpError('KP_ERR_SERVER_TLS', [`${options.certFile}, ${options.keyFile}`, 'not a PEM certificate and key'], { cause: err });
    }
  } else {
    ({ cert, key } = selfSignedCertificate(options.nodeName, options.addresses, options.now ?? new Date()));
  }
  return { cert, key, ...(clientCA !== undefined ? { clientCA } : {}) };
}

async function readPem(path: string, field: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw kpError('KP_ERR_SERVER_TLS', [path, `${field} cannot be read`], { cause: err });
  }
}

/**
 * A self-signed serving certificate: node:crypto makes the RSA key (it cannot make X.509
 * certificates), node-forge the certificate. Subject CN `<node>@<unix seconds>` as the
 * kubelet's; subject alternative names: the node name and `localhost`, and every address
 * given plus 127.0.0.1 and ::1.
 */
export function selfSignedCertificate(nodeName: string, addresses: readonly string[], now: Date): { cert: string; key: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  // A positive serial: the first byte's high bit clear.
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  certificate.serialNumber = serial.toString('hex');
  certificate.validity.notBefore = new Date(now.getTime() - 3600 * 1000);
  certificate.validity.notAfter = new Date(now.getTime() + SELF_SIGNED_VALIDITY_MS);
  // UTF8String: `@` is not a PrintableString character, and Go refuses a name that says it is.
  const subject = [{ name: 'commonName', value: `${nodeName}@${Math.floor(now.getTime() / 1000)}`, valueTagClass: forge.asn1.Type.UTF8 as never }];
  certificate.setSubject(subject);
  certificate.setIssuer(subject);
  const ips = [...new Set([...addresses.filter((a) => isIP(a) !== 0 && a !== '0.0.0.0' && a !== '::'), '127.0.0.1', '::1'])];
  certificate.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...new Set([nodeName, 'localhost'])].map((value) => ({ type: 2, value })).concat(ips.map((ip) => ({ type: 7, ip }) as never)) },
  ]);
  certificate.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(certificate), key: keyPem };
}
