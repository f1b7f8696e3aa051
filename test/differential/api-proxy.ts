// A recording TLS proxy in front of the API server, one per node under test: it sees every
// request a node sends (method, path, response code, and what a DELETE asked for), which a
// watch cannot show. It serves the API server's own certificate, so a node's kubeconfig only
// changes its port: both clients keep verifying the server as before.
import { readFile, writeFile } from 'node:fs/promises';
import { Agent, createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { readDeleteOptions, readObjectName, type DeleteRequestOptions } from './request-body.js';

export interface RecordedRequest {
  /** performance.now() when the response headers came back (or the request failed). */
  t: number;
  method: string;
  /** The URL path, without the query. */
  path: string;
  query: URLSearchParams;
  /** The response code; 0 when the API server could not be reached. */
  status: number;
  /** For DELETE: what the request asked for. */
  deleteOptions?: DeleteRequestOptions;
  /** For POST: the name of the object to create. */
  objectName?: string;
  watch: boolean;
}

export interface RecordingProxy {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** Writes a copy of `kubeconfig` that reaches the API server through this proxy. */
  writeKubeconfig(kubeconfig: string, to: string): Promise<void>;
  close(): Promise<void>;
}

export interface RecordingProxyOptions {
  /** The API server, `https://127.0.0.1:<port>`. */
  target: string;
  /** PEM files: the cluster CA (to verify the API server) and the API server's serving pair. */
  caFile: string;
  certFile: string;
  keyFile: string;
  /**
   * How long to hold back what a watch request receives (each chunk, in order), by the
   * request's path: a client whose watch lags behind the API server, as under load. None by default.
   */
  watchDelayMs?: (path: string) => number;
}

// Hop-by-hop headers are the proxy's own business on each leg.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

function endToEnd(headers: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k.toLowerCase())) out[k] = v;
  return out;
}

/**
 * A recording proxy in front of a local control plane (`cluster.dir`, `cluster.server`), serving
 * the API server's own certificate from the cluster's pki folder.
 */
export function startClusterProxy(cluster: { readonly dir: string; readonly server: string }, options: Pick<RecordingProxyOptions, 'watchDelayMs'> = {}): Promise<RecordingProxy> {
  const pki = join(cluster.dir, 'pki');
  return startRecordingProxy({
    target: cluster.server,
    caFile: join(pki, 'ca.crt'),
    certFile: join(pki, 'apiserver.crt'),
    keyFile: join(pki, 'apiserver.key'),
    ...options,
  });
}

export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const [ca, cert, key] = await Promise.all([readFile(options.caFile), readFile(options.certFile), readFile(options.keyFile)]);
  const target = new URL(options.target);
  const upstream = new Agent({ keepAlive: true, ca, maxSockets: 256 });
  const requests: RecordedRequest[] = [];

  const server: Server = createServer({ cert, key }, (req, res) => {
    const url = new URL(req.url ?? '/', target);
    const method = req.method ?? 'GET';
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1' || url.pathname.includes('/watch/');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const record = (status: number): void => {
        const entry: RecordedRequest = { t: performance.now(), method, path: url.pathname, query: url.searchParams, status, watch };
        if (method === 'DELETE') {
          const parsed = readDeleteOptions(body, req.headers['content-type'], url.searchParams);
          if (parsed !== undefined) entry.deleteOptions = parsed;
        }
        if (method === 'POST') {
          const name = readObjectName(body);
          if (name !== undefined) entry.objectName = name;
        }
        requests.push(entry);
      };
      const up = request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path: `${url.pathname}${url.search}`,
          headers: { ...endToEnd(req.headers), host: target.host },
          agent: upstream,
        },
        (upRes) => {
          record(upRes.statusCode ?? 0);
          res.writeHead(upRes.statusCode ?? 502, endToEnd(upRes.headers));
          const delayMs = watch ? (options.watchDelayMs?.(url.pathname) ?? 0) : 0;
          if (delayMs > 0) {
            // Timers of one duration fire in the order they were set: the chunks keep theirs.
            const later = (fn: () => void): void => void setTimeout(() => res.destroyed || fn(), delayMs);
            upRes.on('data', (chunk: Buffer) => later(() => res.write(chunk)));
            upRes.on('end', () => later(() => res.end()));
          } else {
            upRes.pipe(res);
          }
          upRes.on('error', () => res.destroy());
        },
      );
      up.on('error', () => {
        record(0);
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
      });
      // A client that goes away (a watch being closed) takes its upstream request along.
      res.on('close', () => up.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    async writeKubeconfig(kubeconfig, to) {
      const text = await readFile(kubeconfig, 'utf8');
      const replaced = text.replace(/^(\s*server:\s*).*$/m, `$1${url}`);
      if (replaced === text) throw new Error(`no server: line in ${kubeconfig}`);
      await writeFile(to, replaced, { mode: 0o600 });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      upstream.destroy();
    },
  };
}

/** The pod a request is about: `/api/v1/namespaces/<ns>/pods/<name>[/<subresource>]`. */
export function podOfRequest(path: string): { namespace: string; name: string; subresource?: string } | undefined {
  const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)(?:\/([^/]+))?$/.exec(path);
  if (m === null) return undefined;
  return m[3] !== undefined ? { namespace: m[1]!, name: m[2]!, subresource: m[3] } : { namespace: m[1]!, name: m[2]! };
}
