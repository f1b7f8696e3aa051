import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';

/** One endpoint: an exact path and a GET handler (HEAD is answered from it without a body). */
export interface Route {
  readonly path: string;
  handle(req: IncomingMessage, res: ServerResponse): void | Promise<void>;
}

export interface AgentServerOptions {
  /** 127.0.0.1 by default: the endpoints are not exposed unless asked. */
  address?: string;
  /** 0 picks a free port. */
  port?: number;
  routes: readonly Route[];
  logger?: Logger;
}

export interface BoundAddress {
  address: string;
  port: number;
}

/**
 * A plain node:http server for the agent's endpoints (healthz, the read-only `/pods`,
 * `/metrics`). Each endpoint family lives in its own file and contributes a `Route`; the agent
 * builds one server per port (the healthz port, the read-only port).
 */
export interface AgentServer {
  /** Binds and resolves with the bound address (the real port when 0 was asked). */
  listen(): Promise<BoundAddress>;
  /** Stops accepting, closes idle keep-alive connections, resolves when closed. */
  close(): Promise<void>;
}

export function createAgentServer(options: AgentServerOptions): AgentServer {
  const address = options.address ?? '127.0.0.1';
  const port = options.port ?? 0;
  const log = childLogger(options.logger, { component: 'server' });
  const routes = new Map(options.routes.map((r) => [r.path, r]));

  const server: Server = createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const route = routes.get(path);
    if (!route) {
      send(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    Promise.resolve()
      .then(() => route.handle(req, res))
      .catch((err: unknown) => {
        log.error({ path, err: kpError('KP_ERR_SERVER_ENDPOINT', [path], { cause: err }) }, 'endpoint failed');
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
  });

  return {
    listen: () =>
      new Promise<BoundAddress>((resolve, reject) => {
        const onError = (err: Error) => reject(kpError('KP_ERR_CONFIG_LISTEN', [address, port], { cause: err }));
        server.once('error', onError);
        server.listen(port, address, () => {
          server.off('error', onError);
          const bound = server.address() as AddressInfo;
          log.info({ address: bound.address, port: bound.port }, 'listening');
          resolve({ address: bound.address, port: bound.port });
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) {
          resolve();
          return;
        }
        // close() reports only "not running", which is the state asked for.
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** Writes a complete response; HEAD gets the headers only. */
export function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}
