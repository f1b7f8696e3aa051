// A GET over HTTPS with a bearer token or a client certificate, for tests of the kubelet port,
// the API server's node proxy and the connection pool; the answer's status and body as text.
// Tokens are sent, never logged.
import { request, type Agent } from 'node:https';

export interface HttpsGetOptions {
  token?: string;
  cert?: string;
  key?: string;
  /** The CA to verify the server with; none: the server is not verified (a self-signed kubelet). */
  ca?: string;
  /** The connections' agent (a keep-alive pool's): its TLS settings apply, `ca` and the others are not used. */
  agent?: Agent;
}

export function httpsGet(url: string, options: HttpsGetOptions = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'GET',
        ...(options.agent !== undefined
          ? { agent: options.agent }
          : {
              agent: false,
              ...(options.ca !== undefined ? { ca: options.ca } : { rejectUnauthorized: false }),
              ...(options.cert !== undefined ? { cert: options.cert, key: options.key } : {}),
            }),
        ...(options.token !== undefined ? { headers: { Authorization: `Bearer ${options.token}` } } : {}),
        timeout: 15_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: no answer within 15 s`)));
    req.on('error', reject);
    req.end();
  });
}
