/**
 * The error registry: every error kubelet-pods raises is built here from a stable code and a
 * message template. Callers branch on `code`, never on message text. Every code is documented
 * in docs/errors.md (a unit test keeps the two in step).
 *
 * Messages start lower-case, name the object (path, URL, full name or UID, quoted) and never
 * contain header values, tokens or response bodies.
 */

/** A value named in a message: JSON-quoted, so empty strings and odd characters show. */
export const quote = (s: string): string => JSON.stringify(s);

const templates = {
  KP_ERR_POD_FULL_NAME: (input: string) => `failed to parse the pod full name ${quote(input)}`,
  KP_ERR_POD_SOURCE: (uid: string) => `cannot get source of pod ${quote(uid)}`,
  KP_ERR_SOURCE_UNKNOWN: (source: string) => `unknown pod source ${quote(source)}`,
  KP_ERR_NO_MIRROR_CLIENT: (method: string) =>
    `${method}: this pod manager was created without a mirror client (pass { mirrorClient } to new PodManager)`,
  KP_ERR_METRIC_REGISTERED: (name: string) =>
    `metric ${quote(name)} is already registered in this registry: give each PodManager its own registry`,
  // --- sources ---
  KP_ERR_SOURCE_DECODE: (where: string, reason: string) =>
    `${where}: couldn't parse as pod (${reason}), please check config file`,
  KP_ERR_SOURCE_INVALID_POD: (reason: string) => `invalid pod: ${reason}`,
  KP_ERR_SOURCE_INVALID_POD_LIST: (reason: string) => `invalid pods list: ${reason}`,
  KP_ERR_SOURCE_CLUSTER_TRUST_BUNDLE: () => 'static pods may not use ClusterTrustBundle projected volume sources',
  KP_ERR_SOURCE_API_REFERENCE: (where: string, resource: string, name: string, field: string) =>
    `static pod from ${quote(where)} references ${resource} ${quote(name)} (${field})`,
  KP_ERR_SOURCE_PATH_MISSING: (path: string) => `static pod path ${quote(path)} does not exist, ignoring`,
  KP_ERR_SOURCE_PATH_TYPE: (path: string) => `static pod path ${quote(path)} is not a directory or file`,
  KP_ERR_SOURCE_PATH_STAT: (path: string) => `cannot stat static pod path ${quote(path)}`,
  KP_ERR_SOURCE_FILE_READ: (path: string) => `cannot read manifest ${quote(path)}`,
  KP_ERR_SOURCE_FILE_TOO_LARGE: (path: string, limit: number) =>
    `manifest ${quote(path)} is larger than the ${limit}-byte limit`,
  KP_ERR_SOURCE_HTTP_FETCH: (url: string) => `${url}: request failed`,
  KP_ERR_SOURCE_HTTP_STATUS: (url: string, status: string) => `${url}: ${status}`,
  KP_ERR_SOURCE_HTTP_TOO_LARGE: (url: string, limit: number) => `${url}: body is larger than the ${limit}-byte limit`,
  KP_ERR_SOURCE_HTTP_EMPTY: (url: string) => `zero-length data received from ${url}`,
  KP_ERR_SOURCE_HTTP_PARSE: (url: string, single: string, multiple: string) =>
    `${url}: couldn't parse as single (${single}) or multiple pods (${multiple})`,
  KP_ERR_SOURCE_OPTIONS: (option: string, received: string) => `invalid source option ${option}: ${received}`,
  KP_ERR_SOURCE_API_LIST: (node: string, reason: string) => `cannot list the pods bound to node ${quote(node)}: ${reason}`,
  KP_ERR_SOURCE_API_WATCH: (node: string, reason: string) =>
    `the watch of the pods bound to node ${quote(node)} failed: ${reason}`,
  // --- cluster and mirror client ---
  KP_ERR_CLUSTER_NO_GO: (tool: string, reason: string) =>
    `cannot build ${tool}: ${reason}; install Go >= 1.24 (for example \`apt-get install golang\` or from https://go.dev/dl/)`,
  KP_ERR_CLUSTER_BUILD: (tool: string, dir: string, reason: string) => `failed to build ${tool} in ${quote(dir)}: ${reason}`,
  KP_ERR_CLUSTER_START: (log: string, reason: string) =>
    `the local control plane did not become ready: ${reason} (log: ${quote(log)})`,
  KP_ERR_CLUSTER_STOPPED: (what: string) => `${what}: the local control plane has been disposed of`,
  KP_ERR_CLUSTER_KUBELET_START: (log: string, reason: string) =>
    `the hollow kubelet did not become ready: ${reason} (log: ${quote(log)})`,
  KP_ERR_CLUSTER_KWOK_START: (where: string, reason: string) => `kwok did not become ready: ${reason} (${where})`,
  KP_ERR_CLI_USAGE: (reason: string) => `${reason} (see --help)`,
  KP_ERR_MIRROR_NODE_UID: (node: string, reason: string) => `failed to get node UID for node ${quote(node)}: ${reason}`,
  KP_ERR_MIRROR_CREATE: (fullName: string, reason: string) =>
    `failed to create mirror pod ${quote(fullName)}: ${reason}`,
  KP_ERR_MIRROR_HASH_CONFLICT: (fullName: string, hash: string, existing: string) =>
    `cannot create mirror pod ${quote(fullName)} with hash ${quote(hash)}: another pod with a different hash (${quote(existing)}) holds the name`,
  // --- events ---
  KP_ERR_EVENT_WRITE: (object: string, reason: string) => `failed to write an event about ${object}: ${reason}`,
  // --- agent ---
  KP_ERR_NODE_OPTIONS: (option: string, received: string) => `invalid node option ${option}: ${received}`,
  KP_ERR_NODE_REGISTER: (node: string, reason: string) => `failed to register node ${quote(node)}: ${reason}`,
  KP_ERR_NODE_WATCH: (node: string, call: string, reason: string) => `the ${call} of node ${quote(node)}'s own Node failed: ${reason}`,
  KP_ERR_NODE_LEASE: (node: string, reason: string) => `failed to renew the lease of node ${quote(node)}: ${reason}`,
  KP_ERR_STATUS_OPTIONS: (option: string, received: string) => `invalid status option ${option}: ${received}`,
  KP_ERR_STATUS_WRITE: (fullName: string, reason: string) =>
    `failed to write the status of pod ${quote(fullName)} (a static pod's to its mirror pod): ${reason}`,
  KP_ERR_STATUS_READ: (fullName: string, reason: string) =>
    `failed to read pod ${quote(fullName)} before writing its status over a copy that differs: ${reason}`,
  KP_ERR_STATUS_BATCH: (kind: string) => `a ${kind} status batch failed`,
  KP_ERR_CONFIG_DURATION: (input: string) => `invalid duration ${quote(input)}`,
  KP_ERR_CONFIG_READ: (file: string) => `cannot read the kubelet configuration file ${quote(file)}`,
  KP_ERR_CONFIG_INVALID: (file: string, problems: readonly string[]) =>
    `invalid kubelet configuration ${quote(file)}: ${problems.join('; ')}`,
  KP_ERR_CONFIG_FLAGS: (problems: readonly string[]) => `invalid flags: ${problems.join('; ')}`,
  KP_ERR_CONFIG_LISTEN: (address: string, port: number) => `cannot listen on ${address}:${port}`,
  KP_ERR_CONFIG_PORT_IN_USE: (address: string, port: number, setting: string) =>
    `cannot listen on ${address}:${port}: the port is in use; choose another with ${setting}, or 0 to turn this endpoint off`,
  KP_ERR_CONFIG_KUBECONFIG: (reason: string) => `unusable kubeconfig: ${reason}`,
  KP_ERR_SERVER_ENDPOINT: (path: string) => `endpoint ${quote(path)} failed`,
  KP_ERR_SERVER_AUTHN: (subject: string, reason: string) => `the TokenReview of ${subject} for the kubelet port failed: ${reason}`,
  KP_ERR_SERVER_AUTHZ: (subject: string, reason: string) => `the SubjectAccessReview of ${quote(subject)} for the kubelet port failed: ${reason}`,
  KP_ERR_SERVER_NO_API: (needs: readonly string[]) =>
    `the kubelet port stays closed: ${needs.join(' and ')} need an API server, and the agent runs without --kubeconfig (set authorization.mode AlwaysAllow and authentication.webhook.enabled false, or turn the port off with --port 0)`,
  KP_ERR_SERVER_TLS: (what: string, reason: string) => `cannot set up TLS for the kubelet port: ${what}: ${reason}`,
  // --- simulated runtime ---
  KP_ERR_SIMULATION_ANNOTATION: (pod: string, annotation: string, problems: readonly string[]) =>
    `pod ${quote(pod)}: annotation ${quote(annotation)}: entries ignored (the default applies): ${problems.join('; ')}`,
  // --- fleet ---
  KP_ERR_FLEET_CONFIG: (where: string, field: string, reason: string) => `invalid fleet configuration ${where}: ${field}: ${reason}`,
  KP_ERR_FLEET_FENCED: (node: string, call: string, reason: string) => `node ${quote(node)}: ${call} not sent: ${reason}`,
  KP_ERR_FLEET_NODE_WATCH: (call: string, reason: string) => `the ${call} of the fleet's Nodes failed: ${reason}`,
} satisfies Record<string, (...args: never[]) => string>;

export type ErrorCode = keyof typeof templates;

/** All codes, for the docs cross-check. */
export const ERROR_CODES = Object.keys(templates) as ErrorCode[];

export class KubeletPodsError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeletPodsError';
    this.code = code;
  }
}

/** Builds the registered error `code` with its template's arguments. */
export function kpError<C extends ErrorCode>(
  code: C,
  args: Parameters<(typeof templates)[C]>,
  options?: { cause?: unknown },
): KubeletPodsError {
  const template = templates[code] as (...a: Parameters<(typeof templates)[C]>) => string;
  return new KubeletPodsError(code, template(...args), options);
}

export function hasErrorCode(err: unknown, code: ErrorCode): err is KubeletPodsError {
  return err instanceof KubeletPodsError && err.code === code;
}
