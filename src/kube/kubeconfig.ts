import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Cluster, User } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { kpError, type KubeletPodsError } from '../errors.js';

/**
 * What the API clients read of a kubeconfig: the current context's cluster and user, in
 * client-node 1.x's shapes. Both our `KubeConfigFile` and client-node's own `KubeConfig` (the
 * tests, the fleet's set-up and users of the library build those) are one.
 */
export interface KubeConfigLike {
  getCurrentCluster(): Cluster | null;
  getCurrentUser(): User | null;
}

/**
 * A kubeconfig file as our reader (`readKubeConfigFile`) found it. Files it names (CA, client
 * certificate and key) are read when the first request needs them, not here, as before: a
 * certificate that appears after the start is then picked up by the next request.
 */
export class KubeConfigFile implements KubeConfigLike {
  /** The file, absolute. */
  readonly path: string;
  /** The current context's name. */
  readonly contextName: string;
  readonly cluster: Cluster;
  readonly user: User | null;
  /**
   * The current user's `token-file`, absolute, when its token comes from a file (and not an
   * inline `token`): read again each minute (src/kube/token-file.ts), since a projected
   * ServiceAccount token is rewritten before it expires.
   */
  readonly tokenFile: string | undefined;
  /**
   * The field that only client-node can serve (`users[0].user.exec`, `…auth-provider`,
   * `clusters[0].cluster.proxy-url`), for which the clients load client-node when they first
   * send; undefined for the common kubeconfigs (token, token file, client certificate).
   */
  readonly needsClientNode: string | undefined;

  constructor(fields: { path: string; contextName: string; cluster: Cluster; user: User | null; tokenFile?: string; needsClientNode?: string }) {
    this.path = fields.path;
    this.contextName = fields.contextName;
    this.cluster = fields.cluster;
    this.user = fields.user;
    this.tokenFile = fields.tokenFile;
    this.needsClientNode = fields.needsClientNode;
  }

  getCurrentCluster(): Cluster {
    return this.cluster;
  }

  getCurrentUser(): User | null {
    return this.user;
  }

  getCurrentContext(): string {
    return this.contextName;
  }
}

/** A kubeconfig's problem, naming the file and the field: `unusable kubeconfig: <file>: <field> <problem>`. */
export function kubeconfigError(path: string, field: string, problem: string): KubeletPodsError {
  return kpError('KP_ERR_CONFIG_KUBECONFIG', [`${path}: ${field} ${problem}`]);
}

type Raw = Record<string, unknown>;
const isMap = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Impersonation fields client-node never applied: refused rather than sent as someone else. */
const UNSUPPORTED_USER_FIELDS = ['as-groups', 'as-uid', 'as-user-extra'] as const;

/**
 * Reads a kubeconfig file for the API clients, without client-node: the current context, its
 * cluster (server, CA inline or from a file, `insecure-skip-tls-verify`, `tls-server-name`) and
 * its user (token, token file, client certificate and key inline or from files, basic auth,
 * `as`). Relative paths are relative to the file's folder, as kubectl reads them. What this
 * reader does not do itself, exec plugins, auth providers and proxies, it marks
 * (`needsClientNode`): the clients then load client-node for it. Anything else it cannot use is
 * refused with the file and the field.
 */
export function readKubeConfigFile(file: string): KubeConfigFile {
  const path = resolve(file);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_KUBECONFIG', [`${path} cannot be read: ${(err as Error).message}`]);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_KUBECONFIG', [`${path} is not YAML: ${(err as Error).message}`]);
  }
  if (!isMap(doc)) throw kpError('KP_ERR_CONFIG_KUBECONFIG', [`${path} holds no kubeconfig (not a map)`]);
  const dir = dirname(path);
  const file_ = (v: string): string => resolve(dir, v);

  const contextName = doc['current-context'];
  if (typeof contextName !== 'string' || contextName === '') throw kubeconfigError(path, 'current-context', 'is not set');
  const context = named(path, doc, 'contexts', contextName, 'current-context');
  const ctx = isMap(context.entry['context']) ? context.entry['context'] : undefined;
  if (ctx === undefined) throw kubeconfigError(path, `${context.field}.context`, 'is missing');
  const clusterName = ctx['cluster'];
  if (typeof clusterName !== 'string' || clusterName === '') throw kubeconfigError(path, `${context.field}.context.cluster`, 'is missing');
  const clusterEntry = named(path, doc, 'clusters', clusterName, `${context.field}.context.cluster`);
  const cluster = readCluster(path, clusterEntry.field, clusterName, clusterEntry.entry, file_);

  let user: User | null = null;
  let tokenFile: string | undefined;
  let needsClientNode: string | undefined = cluster.proxyUrl !== undefined ? `${clusterEntry.field}.cluster.proxy-url` : undefined;
  const userName = ctx['user'];
  if (userName !== undefined && userName !== '') {
    if (typeof userName !== 'string') throw kubeconfigError(path, `${context.field}.context.user`, 'is not a string');
    const userEntry = named(path, doc, 'users', userName, `${context.field}.context.user`);
    const read = readUser(path, userEntry.field, userName, userEntry.entry, file_);
    user = read.user;
    tokenFile = read.tokenFile;
    needsClientNode ??= read.needsClientNode;
  }
  return new KubeConfigFile({ path, contextName, cluster, user, ...(tokenFile !== undefined ? { tokenFile } : {}), ...(needsClientNode !== undefined ? { needsClientNode } : {}) });
}

/** The entry of `list` with that name, and its field path (`users[2]`). */
function named(path: string, doc: Raw, list: 'contexts' | 'clusters' | 'users', name: string, referrer: string): { entry: Raw; field: string } {
  const entries = doc[list];
  const index = Array.isArray(entries) ? entries.findIndex((e) => isMap(e) && e['name'] === name) : -1;
  if (index < 0) throw kubeconfigError(path, referrer, `names ${JSON.stringify(name)}, which is not an entry of ${list}`);
  return { entry: (entries as Raw[])[index]!, field: `${list}[${index}]` };
}

function optionalString(path: string, field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw kubeconfigError(path, field, 'is not a string');
  return value;
}

function readCluster(path: string, at: string, name: string, entry: Raw, file: (v: string) => string): Cluster {
  const c = entry['cluster'];
  if (!isMap(c)) throw kubeconfigError(path, `${at}.cluster`, 'is missing');
  const field = (key: string): string => `${at}.cluster.${key}`;
  const server = optionalString(path, field('server'), c['server']);
  if (server === undefined) throw kubeconfigError(path, field('server'), 'is missing');
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw kubeconfigError(path, field('server'), `${JSON.stringify(server)} is not a URL`);
  }
  const skip = c['insecure-skip-tls-verify'];
  if (skip !== undefined && typeof skip !== 'boolean') throw kubeconfigError(path, field('insecure-skip-tls-verify'), 'is not true or false');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw kubeconfigError(path, field('server'), `${JSON.stringify(server)} is neither https nor http`);
  // As client-node: a plain-HTTP server only when TLS verification is explicitly off.
  if (url.protocol === 'http:' && skip !== true) throw kubeconfigError(path, field('server'), `${JSON.stringify(server)} is plain HTTP, which needs insecure-skip-tls-verify: true`);
  const caFile = optionalString(path, field('certificate-authority'), c['certificate-authority']);
  const caData = optionalString(path, field('certificate-authority-data'), c['certificate-authority-data']);
  const tlsServerName = optionalString(path, field('tls-server-name'), c['tls-server-name']);
  const proxyUrl = optionalString(path, field('proxy-url'), c['proxy-url']);
  return {
    name,
    server: server.replace(/\/$/, ''),
    skipTLSVerify: skip === true,
    ...(caFile !== undefined ? { caFile: file(caFile) } : {}),
    ...(caData !== undefined ? { caData } : {}),
    ...(tlsServerName !== undefined ? { tlsServerName } : {}),
    ...(proxyUrl !== undefined ? { proxyUrl } : {}),
  };
}

function readUser(path: string, at: string, name: string, entry: Raw, file: (v: string) => string): { user: User; tokenFile?: string; needsClientNode?: string } {
  const u = entry['user'] ?? {};
  if (!isMap(u)) throw kubeconfigError(path, `${at}.user`, 'is not a map');
  const field = (key: string): string => `${at}.user.${key}`;
  const str = (key: string): string | undefined => optionalString(path, field(key), u[key]);
  for (const key of UNSUPPORTED_USER_FIELDS) {
    if (u[key] !== undefined) throw kubeconfigError(path, field(key), 'is not supported (impersonation beyond `as`)');
  }
  const token = str('token');
  const tokenFileName = str('token-file');
  const certFile = str('client-certificate');
  const certData = str('client-certificate-data');
  const keyFile = str('client-key');
  const keyData = str('client-key-data');
  const username = str('username');
  const password = str('password');
  const impersonateUser = str('as');
  const hasCert = certFile !== undefined || certData !== undefined;
  const hasKey = keyFile !== undefined || keyData !== undefined;
  if (hasCert && !hasKey) throw kubeconfigError(path, field('client-key'), `is missing: ${certFile !== undefined ? 'client-certificate' : 'client-certificate-data'} needs its key (client-key or client-key-data)`);
  if (hasKey && !hasCert) throw kubeconfigError(path, field('client-certificate'), `is missing: ${keyFile !== undefined ? 'client-key' : 'client-key-data'} needs its certificate (client-certificate or client-certificate-data)`);
  if (password !== undefined && username === undefined) throw kubeconfigError(path, field('username'), 'is missing: password needs a username');

  let tokenFile: string | undefined;
  if (token === undefined && tokenFileName !== undefined) {
    tokenFile = file(tokenFileName);
    // Read once now, as client-node read it at load: a missing token file stops the start.
    try {
      readFileSync(tokenFile, 'utf8');
    } catch (err) {
      throw kubeconfigError(path, field('token-file'), `${tokenFile} cannot be read: ${(err as Error).message}`);
    }
  }
  const exec = u['exec'];
  const authProvider = u['auth-provider'];
  if (exec !== undefined && !isMap(exec)) throw kubeconfigError(path, field('exec'), 'is not a map');
  if (authProvider !== undefined && !isMap(authProvider)) throw kubeconfigError(path, field('auth-provider'), 'is not a map');
  const needsClientNode = exec !== undefined ? field('exec') : authProvider !== undefined ? field('auth-provider') : undefined;
  const user: User = {
    name,
    ...(token !== undefined ? { token } : {}),
    ...(certFile !== undefined ? { certFile: file(certFile) } : {}),
    ...(certData !== undefined ? { certData } : {}),
    ...(keyFile !== undefined ? { keyFile: file(keyFile) } : {}),
    ...(keyData !== undefined ? { keyData } : {}),
    ...(username !== undefined ? { username } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(impersonateUser !== undefined ? { impersonateUser } : {}),
    ...(exec !== undefined ? { exec } : {}),
    ...(authProvider !== undefined ? { authProvider } : {}),
  };
  return { user, ...(tokenFile !== undefined ? { tokenFile } : {}), ...(needsClientNode !== undefined ? { needsClientNode } : {}) };
}
