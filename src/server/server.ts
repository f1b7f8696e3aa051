import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { childLogger, type Logger } from '../logger.js';
import { kpError } from '../errors.js';

/**
 * One endpoint: a path and a GET handler (HEAD is answered from it without a body). A prefix
 * route also answers every path below it (`/containerLogs/…`); `path` is the request's path.
 */
export interface Route {
  readonly path: string;
  readonly prefix?: boolean;
  handle(req: IncomingMessage, res: ServerResponse, path: string): void | Promise<void>;
}

/**
 * Decides whether a request may reach its route (the kubelet port's authentication and
 * authorization). It answers refused requests itself and resolves false; true lets them on.
 */
export type RequestGuard = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

export interface ServerTLS {
  /** The serving certificate and its key, PEM. */
  readonly cert: string;
  readonly key: string;
  /** CA bundle (PEM) that client certificates are verified against; none: none are asked for. */
  readonly clientCA?: string;
}

export interface AgentServerOptions {
  /** 127.0.0.1 by default: the endpoints are not exposed unless asked. */
  address?: string;
  /** 0 picks a free port. */
  port?: number;
  routes: readonly Route[];
  /** HTTPS instead of HTTP. */
  tls?: ServerTLS;
  /** Runs before every route. */
  guard?: RequestGuard;
  /**
   * The flag and config field that set this port (`--healthz-port or healthzPort`), named by
   * the error when the port is taken.
   */
  setting?: string;
  logger?: Logger;
}

export interface BoundAddress {
  address: string;
  port: number;
}

/**
 * A node:http(s) server for the agent's endpoints. Each endpoint family lives in its own file
 * and contributes a `Route`; the agent builds one server per port (healthz, read-only, the
 * authenticated kubelet port).
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
  const exact = new Map(options.routes.filter((r) => r.prefix !== true).map((r) => [r.path, r]));
  const prefixed = options.routes.filter((r) => r.prefix === true);
  const findRoute = (path: string): Route | undefined =>
    exact.get(path) ?? prefixed.find((r) => path.startsWith(`${r.path}/`));

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    Promise.resolve()
      .then(async () => {
        if (options.guard !== undefined && !(await options.guard(req, res, path))) return;
        const route = findRoute(path);
        if (!route) {
          send(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
          return;
        }
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          res.setHeader('Allow', 'GET, HEAD');
          send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
          return;
        }
        await route.handle(req, res, path);
      })
      .catch((err: unknown) => {
        log.error({ path, err: kpError('KP_ERR_SERVER_ENDPOINT', [path], { cause: err }) }, 'endpoint failed');
        if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
        else res.destroy();
      });
  };
  const server: Server =
    options.tls === undefined
      ? createHttpServer(handler)
      : createHttpsServer(
          {
            cert: options.tls.cert,
            key: options.tls.key,
            // Client certificates are asked for but not required: a request without one may
            // still authenticate with a bearer token. The guard reads the verdict.
            ...(options.tls.clientCA !== undefined ? { ca: options.tls.clientCA, requestCert: true, rejectUnauthorized: false } : {}),
          },
          handler,
        );

  return {
    listen: () =>
      new Promise<BoundAddress>((resolve, reject) => {
        const onError = (err: NodeJS.ErrnoException) =>
          reject(
            err.code === 'EADDRINUSE' && options.setting !== undefined
              ? kpError('KP_ERR_CONFIG_PORT_IN_USE', [address, port, options.setting], { cause: err })
              : kpError('KP_ERR_CONFIG_LISTEN', [address, port], { cause: err }),
          );
        server.once('error', onError);
        server.listen(port, address, () => {
          server.off('error', onError);
          const bound = server.address() as AddressInfo;
          log.info({ address: bound.address, port: bound.port, tls: options.tls !== undefined }, 'listening');
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
