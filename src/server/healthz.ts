import { send, type Route } from './server.js';

/** `/healthz` → 200 `ok`, as the kubelet answers while its sync loop is alive. */
export function healthzRoute(): Route {
  return { path: '/healthz', handle: (_req, res) => send(res, 200, 'text/plain; charset=utf-8', 'ok') };
}
