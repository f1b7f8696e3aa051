/**
 * What a request to the kubelet port asks for, in the terms of the API server's authorizer: a
 * verb on `nodes/<subresource>` of this node. The mapping is the kubelet's (v1.34,
 * pkg/kubelet/server/auth.go, with KubeletFineGrainedAuthz on as it is by default):
 *
 * - the verb comes from the HTTP method (GET get, POST create, PUT update, PATCH patch, DELETE
 *   delete; any other method an empty verb, which no rule grants);
 * - `/stats…` → stats, `/metrics…` → metrics, `/logs…` → log, `/checkpoint…` → checkpoint,
 *   `/statusz` → statusz, `/flagz` → configz, anything else → proxy;
 * - `/pods…`, `/runningpods…`, `/healthz…` and `/configz…` are first tried as pods, pods,
 *   healthz and configz, and fall back to proxy: either grant allows the request.
 *
 * "`/metrics…`" means the path itself or one below it (`/metrics/cadvisor`), not `/metricsx`.
 */
export interface RequestAttributes {
  readonly verb: string;
  /** The subresources of `nodes` to try in order; the first one allowed lets the request in. */
  readonly subresources: readonly string[];
}

const VERBS: Readonly<Record<string, string>> = { POST: 'create', GET: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

// Fine-grained first choices; each falls back to the general rule below.
const FINE_GRAINED: ReadonlyArray<readonly [string, string]> = [
  ['/pods', 'pods'],
  ['/healthz', 'healthz'],
  ['/configz', 'configz'],
  ['/runningpods', 'pods'],
];

const GENERAL: ReadonlyArray<readonly [string, string]> = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/checkpoint', 'checkpoint'],
  ['/statusz', 'statusz'],
  ['/flagz', 'configz'],
];

/** `path` is `base` or lies below it. */
function isSubpath(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

export function requestAttributes(method: string, path: string): RequestAttributes {
  const subresources: string[] = [];
  const fine = FINE_GRAINED.find(([base]) => isSubpath(path, base));
  if (fine !== undefined) subresources.push(fine[1]);
  subresources.push(GENERAL.find(([base]) => isSubpath(path, base))?.[1] ?? 'proxy');
  return { verb: VERBS[method] ?? '', subresources };
}
