import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname as osHostname, networkInterfaces as osNetworkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { dirname, resolve as resolvePath } from 'node:path';
import { kpError } from '../errors.js';
import { DEFAULT_POD_CIDR, formatIP, parseIP, podCidrProblem } from '../values/ip.js';
import { nodeNameFromHostname } from '../values/node-name.js';
import { parseDuration } from '../values/go-duration.js';
import { CONFIG_FIELDS, scalarFields, type ConfigField, type ScalarFieldType } from './fields.js';
import { parseScenarios } from '../scenario/parse-scenarios.js';
import { decodeKubeletConfigFile, describeValue, ignoredFieldsOf, type KubeletConfigFile } from './kubelet-config-file.js';
import { SIMULATED_LIFECYCLES, type AgentConfig, type RunFlags, type SimulatedLifecycle } from './types.js';

/**
 * The agent's resolved configuration: the KubeletConfiguration file (`--config`) merged with
 * the kubelet-named flags, flags winning, over the defaults. Validated once, frozen; the parts
 * of the agent take their settings from it and never see flags or the file. See
 * docs/configuration.md, and src/config/fields.ts for the table every field comes from.
 */

// The types are in types.ts, which fields.ts reads without importing this file back; config's
// users import them from here as before.
export type { AgentConfig, RunFlags, SimulatedLifecycle } from './types.js';

export interface LoadedAgentConfig {
  readonly config: AgentConfig;
  /** Top-level fields of the file that kubelet-pods does not act on, sorted. */
  readonly ignoredFields: readonly string[];
}

export interface LoadAgentConfigOptions {
  /** Reads the `--config` file; `fs.readFile` by default. */
  readFile?: (path: string) => Promise<string>;
  /** The host name used when there is no `--hostname-override`; `os.hostname()` by default. */
  hostname?: () => string;
  /** The machine's addresses, for the default node IP; `os.networkInterfaces()` by default. */
  networkInterfaces?: () => NetworkInterfaces;
}

/** The shape of `os.networkInterfaces()`. */
export type NetworkInterfaces = Readonly<Record<string, readonly NetworkInterfaceInfo[] | undefined>>;

type ScalarKey = 'fileCheckFrequencyMs' | 'httpCheckFrequencyMs' | 'syncFrequencyMs' | 'nodeStatusUpdateFrequencyMs'
  | 'nodeStatusReportFrequencyMs' | 'maxPods' | 'kubeAPIQPS' | 'kubeAPIBurst' | 'eventRecordQPS' | 'eventBurst' | 'address' | 'port' | 'readOnlyPort'
  | 'healthzBindAddress' | 'healthzPort' | 'authenticationTokenWebhook' | 'authenticationWebhookCacheTTLMs' | 'anonymousAuth'
  | 'authorizationMode' | 'authorizationWebhookCacheAuthorizedTTLMs' | 'authorizationWebhookCacheUnauthorizedTTLMs' | 'events'
  | 'simulatedLifecycle';

/**
 * The kubelet's defaults for the honoured fields, except `address` and `healthzBindAddress`:
 * the kubelet listens on 0.0.0.0, we listen on loopback unless told otherwise, so that starting
 * the agent does not expose the pod list to the network by surprise.
 */
export const AGENT_CONFIG_DEFAULTS: Readonly<Pick<AgentConfig, ScalarKey>> = Object.freeze(
  Object.fromEntries(scalarFields().map((f) => [f.key, f.type.default])) as Pick<AgentConfig, ScalarKey>,
);

/**
 * Loads the `--config` file (if any), applies the flags over it and the defaults under both,
 * and validates the result. Problems in the file are reported together in one
 * `KP_ERR_CONFIG_INVALID` naming the file; problems in flags in one `KP_ERR_CONFIG_FLAGS`.
 * Header values never appear in either.
 */
export async function loadAgentConfig(flags: RunFlags, options: LoadAgentConfigOptions = {}): Promise<LoadedAgentConfig> {
  let file: KubeletConfigFile = {};
  let ignoredFields: string[] = [];
  if (flags.config !== undefined) {
    const read = options.readFile ?? ((p: string) => readFile(p, 'utf8'));
    let text: string;
    try {
      text = await read(flags.config);
    } catch (err) {
      throw kpError('KP_ERR_CONFIG_READ', [flags.config], { cause: err });
    }
    file = decodeKubeletConfigFile(flags.config, text);
    ignoredFields = ignoredFieldsOf(file);
  }
  const config = resolveAgentConfig(flags.config ?? '', file, flags, {
    hostname: options.hostname ?? osHostname,
    networkInterfaces: options.networkInterfaces ?? osNetworkInterfaces,
  });
  return Object.freeze({ config, ignoredFields: Object.freeze(ignoredFields) });
}

// Problems per origin (file fields vs flags), so each error names where to look.
interface Problems {
  readonly file: string[];
  readonly flags: string[];
}

/**
 * The file's fields (decoded, from `path`) and the flags into an `AgentConfig`: for each field
 * of the table, the flag if given, else the file's value, else the default.
 */
function resolveAgentConfig(
  path: string,
  file: KubeletConfigFile,
  flags: RunFlags,
  machine: { hostname: () => string; networkInterfaces: () => NetworkInterfaces },
): AgentConfig {
  const p: Problems = { file: [], flags: [] };
  // As the kubelet does, a relative path in the file is relative to the file's folder; one
  // given as a flag is relative to the working directory.
  const dir = dirname(path);
  const fromFile = (key: keyof AgentConfig): unknown => fileFieldValue(fieldOf(key), file, dir, p.file);

  const scalars: Record<string, Scalar> = {};
  // Without a file, the kubelet's legacy flag defaults apply where it has them.
  const withoutFile = path === '';
  for (const f of scalarFields()) {
    const fallback = withoutFile ? defaultWithoutFile(f.type) : f.type.default;
    let value = (fileFieldValue(f, file, dir, p.file) as Scalar | undefined) ?? fallback;
    if (f.flag !== undefined) {
      const raw = flags[f.flag.key];
      if (typeof raw === 'string') value = flagScalar(`--${f.flag.name}`, f.type, raw, value, p.flags);
    }
    scalars[f.key] = value;
  }

  const pathField = (flag: string | undefined, key: keyof AgentConfig): string | undefined => {
    const inFile = fromFile(key) as string | undefined;
    const fromFlag = nonEmpty(flag);
    return fromFlag !== undefined ? resolvePath(fromFlag) : inFile;
  };
  const staticPodPath = pathField(flags.podManifestPath, 'staticPodPath');
  const tlsCertFile = pathField(flags.tlsCertFile, 'tlsCertFile');
  const tlsPrivateKeyFile = pathField(flags.tlsPrivateKeyFile, 'tlsPrivateKeyFile');
  const clientCAFile = pathField(flags.clientCAFile, 'clientCAFile');
  if ((tlsCertFile === undefined) !== (tlsPrivateKeyFile === undefined)) {
    const problems = flags.tlsCertFile !== undefined || flags.tlsPrivateKeyFile !== undefined ? p.flags : p.file;
    const names = problems === p.flags ? '--tls-cert-file and --tls-private-key-file' : 'tlsCertFile and tlsPrivateKeyFile';
    problems.push(`${names}: give both or neither`);
  }
  const urlInFile = fromFile('staticPodURL') as string | undefined;
  const staticPodURL = nonEmpty(flags.manifestURL) ?? urlInFile;
  // A header flag replaces the file's headers, which are then not looked at.
  const staticPodURLHeader =
    flags.manifestURLHeader !== undefined
      ? headersFromFlags(flags.manifestURLHeader, p.flags)
      : ((fromFile('staticPodURLHeader') as AgentConfig['staticPodURLHeader'] | undefined) ?? Object.freeze({}));

  const rawName = flags.hostnameOverride !== undefined ? flags.hostnameOverride : machine.hostname();
  const nodeName = nodeNameFromHostname(rawName);
  if (nodeName === '') p.flags.push('--hostname-override: the node name must not be empty');

  const nodeIP = resolveNodeIP(flags.nodeIP, machine.networkInterfaces, p.flags);
  let podCIDR = (fromFile('podCIDR') as string | undefined) ?? DEFAULT_POD_CIDR;
  const flagCIDR = nonEmpty(flags.podCIDR);
  if (flagCIDR !== undefined) {
    const problem = podCidrProblem(flagCIDR);
    if (problem === undefined) podCIDR = flagCIDR;
    else p.flags.push(`--pod-cidr: ${problem}`);
  }

  // The flag replaces the file's list, which is then not looked at.
  const clusterDNS =
    flags.clusterDNS !== undefined
      ? dnsServers(flags.clusterDNS.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== ''), '--cluster-dns', p.flags)
      : ((fromFile('clusterDNS') as readonly string[] | undefined) ?? Object.freeze([]));

  const scenarios = (fromFile('scenarios') as AgentConfig['scenarios'] | undefined) ?? Object.freeze([]);

  // Everything wrong is reported at once; flag problems ride along with the file's.
  if (p.file.length > 0) throw kpError('KP_ERR_CONFIG_INVALID', [path, [...p.file, ...p.flags]]);
  if (p.flags.length > 0) throw kpError('KP_ERR_CONFIG_FLAGS', [p.flags]);

  return Object.freeze({
    nodeName,
    kubeconfig: nonEmpty(flags.kubeconfig),
    configFile: nonEmpty(flags.config),
    staticPodPath,
    staticPodURL,
    staticPodURLHeader,
    tlsCertFile,
    tlsPrivateKeyFile,
    clientCAFile,
    ...(scalars as Pick<AgentConfig, ScalarKey>),
    nodeIP,
    podCIDR,
    clusterDNS,
    scenarios,
  });
}

function fieldOf(key: keyof AgentConfig): ConfigField {
  const f = CONFIG_FIELDS.find((c) => c.key === key);
  if (f === undefined) throw new Error(`no configuration field ${key}`);
  return f;
}

/**
 * The value a KubeletConfiguration-shaped map gives one field of the table, checked by the
 * field's rule: undefined when the map does not set it, or sets it wrongly (then with a problem
 * naming the field's path). Relative paths are relative to `dir`. `run`'s file and the fleet's
 * `templates[].kubelet` both go through here.
 */
export function fileFieldValue(f: ConfigField, file: KubeletConfigFile, dir: string, problems: string[]): unknown {
  if (f.field === undefined) return undefined;
  const v = fieldValue(file, f.field);
  if (v === undefined || v === null) return undefined;
  if (f.type.kind !== 'other') return fileScalar(f.field, f.type, v, problems);
  switch (f.key) {
    case 'staticPodPath':
    case 'tlsCertFile':
    case 'tlsPrivateKeyFile':
    case 'clientCAFile': {
      const s = nonEmpty(fileString(f.field, v, problems));
      return s === undefined ? undefined : resolvePath(dir, s);
    }
    case 'staticPodURL':
      return nonEmpty(fileString(f.field, v, problems));
    case 'staticPodURLHeader':
      return headersFromFile(v, problems);
    case 'podCIDR': {
      const cidr = nonEmpty(fileString(f.field, v, problems));
      const problem = cidr === undefined ? undefined : podCidrProblem(cidr);
      if (problem === undefined) return cidr;
      problems.push(`${f.field}: ${problem}`);
      return undefined;
    }
    case 'clusterDNS':
      return dnsServersFromFile(v, problems);
    case 'scenarios':
      return parseScenarios(v, f.field, problems);
    default:
      // A new field of kind `other` needs its rule here; the table test runs every field.
      throw new Error(`no file rule for the configuration field ${f.field}`);
  }
}

/**
 * The settings a KubeletConfiguration-shaped map gives (the fleet's `templates[].kubelet`),
 * every field by the table's rules. A field that is not in the table, or that `refuse` gives a
 * reason against, is a problem naming its path; so is a value of the wrong kind.
 */
export function kubeletSettings(
  map: Readonly<Record<string, unknown>>,
  dir: string,
  problems: string[],
  refuse: (field: ConfigField) => string | undefined = () => undefined,
): Partial<AgentConfig> {
  for (const unknown of ignoredFieldsOf(map)) problems.push(`${unknown}: unknown field`);
  for (const key of ['apiVersion', 'kind']) if (key in map) problems.push(`${key}: unknown field`);
  const out: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) {
    if (f.field === undefined || fieldValue(map, f.field) === undefined) continue;
    const reason = refuse(f);
    if (reason !== undefined) {
      problems.push(`${f.field}: ${reason}`);
      continue;
    }
    const value = fileFieldValue(f, map, dir, problems);
    if (value !== undefined) out[f.key] = value;
  }
  return out as Partial<AgentConfig>;
}

type Scalar = number | string | boolean;

/** A field's default for an agent started with flags only (no `--config` file). */
export function defaultWithoutFile(type: ScalarFieldType): Scalar {
  return 'flagsOnlyDefault' in type && type.flagsOnlyDefault !== undefined ? type.flagsOnlyDefault : type.default;
}

/** A field of the file by its path (`authentication.x509.clientCAFile`); undefined when absent. */
export function fieldValue(file: KubeletConfigFile, path: string): unknown {
  let value: unknown = file;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * `--node-ip` as the kubelet takes it, for one address family: an IP address is used as given;
 * `0.0.0.0` or `::` (and no flag, as IPv4) stand for the machine's own address of that family.
 */
function resolveNodeIP(flag: string | undefined, interfaces: () => NetworkInterfaces, problems: string[]): string {
  const value = flag?.trim() ?? '';
  if (value === '' || value === '0.0.0.0') return defaultNodeIP(interfaces(), 4);
  if (value === '::') return defaultNodeIP(interfaces(), 6);
  if (value.includes(',')) {
    problems.push(`--node-ip: one address only (dual-stack node IPs are not supported), got ${JSON.stringify(value)}`);
  } else {
    const ip = parseIP(value);
    // In its canonical text (`FD00:0::2` is `fd00::2`), as the API server stores addresses.
    if (ip !== undefined) return formatIP(ip.family, ip.value);
    problems.push(`--node-ip: must be an IP address, got ${JSON.stringify(value)}`);
  }
  return defaultNodeIP(interfaces(), 4);
}

/**
 * The node IP when `--node-ip` does not give one. The kubelet looks the host name up and, failing
 * that, takes the address of the interface of the default route, which cannot be reproduced
 * without reading routing tables; this takes the machine's first address of the preferred family
 * that is not internal (loopback) or link-local, in the order the system lists its interfaces,
 * then one of the other family, and `127.0.0.1` on a machine with no other address. On a host
 * with one network interface, as test and CI machines usually are, both rules give the same
 * answer; elsewhere, give `--node-ip`.
 */
export function defaultNodeIP(interfaces: NetworkInterfaces, family: 4 | 6 = 4): string {
  const candidates = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((a) => !a.internal && !isLinkLocal(a.address));
  const preferred = candidates.find((a) => isIP(a.address) === family);
  return (preferred ?? candidates.find((a) => isIP(a.address) !== 0))?.address ?? '127.0.0.1';
}

function isLinkLocal(address: string): boolean {
  return address.startsWith('169.254.') || /^fe[89ab]/i.test(address);
}

/** A scalar field's value from the file; undefined (and a problem) when it is wrong. */
function fileScalar(field: string, type: ScalarFieldType, v: unknown, problems: string[]): Scalar | undefined {
  switch (type.kind) {
    case 'boolean':
      if (typeof v === 'boolean') return v;
      problems.push(`${field}: must be true or false, got ${describeValue(v)}`);
      return undefined;
    case 'choice':
      if (typeof v === 'string' && type.values.includes(v)) return v;
      problems.push(`${field}: must be one of ${type.values.join(', ')}, got ${describeValue(v)}`);
      return undefined;
    case 'duration':
      return fileDuration(field, type.allowZero, v, problems);
    case 'number':
      return fileNumber(field, type.integer, type.max, v, problems);
    case 'port':
      return fileNumber(field, true, 65535, v, problems);
    case 'address':
      return fileAddress(field, v, problems);
  }
}

function fileDuration(field: string, allowZero: boolean, v: unknown, problems: string[]): number | undefined {
  if (typeof v !== 'string') {
    problems.push(`${field}: must be a duration string such as "20s", got ${describeValue(v)}`);
    return undefined;
  }
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch {
    problems.push(`${field}: ${JSON.stringify(v)} is not a duration (use Go syntax such as "20s", "1m0s")`);
    return undefined;
  }
  if (ms < 0 || (!allowZero && ms === 0)) {
    problems.push(`${field}: must be ${allowZero ? 'zero or positive' : 'positive'}, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return ms;
}

function fileNumber(field: string, integer: boolean, max: number, v: unknown, problems: string[]): number | undefined {
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    problems.push(`${field}: must be a number, got ${describeValue(v)}`);
    return undefined;
  }
  if (integer && !Number.isInteger(v)) {
    problems.push(`${field}: must be an integer, got ${v}`);
    return undefined;
  }
  if (v < 0 || v > max) {
    problems.push(`${field}: must be between 0 and ${max}, got ${v}`);
    return undefined;
  }
  return v;
}

/** An address; undefined for an empty one, which means the default. */
function fileAddress(field: string, v: unknown, problems: string[]): string | undefined {
  if (typeof v !== 'string') {
    problems.push(`${field}: must be a string, got ${describeValue(v)}`);
    return undefined;
  }
  if (v === '') return undefined;
  if (isIP(v) === 0) {
    problems.push(`${field}: must be an IP address, got ${JSON.stringify(v)}`);
    return undefined;
  }
  return v;
}

function fileString(field: string, v: unknown, problems: string[]): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') {
    problems.push(`${field}: must be a string, got ${describeValue(v)}`);
    return undefined;
  }
  return v;
}

/** A scalar given as a flag, over `current` (the file's value or the default). */
function flagScalar(flag: string, type: ScalarFieldType, raw: string, current: Scalar, problems: string[]): Scalar {
  switch (type.kind) {
    case 'boolean': {
      const word = type.flagTakesValue === true ? raw.trim().toLowerCase() : undefined;
      if (word === 'true' || word === 'false') return word === 'true';
      // Go's strconv.ParseBool, which the kubelet's boolean flags use.
      if (word === undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(raw)) return true;
      if (word === undefined && ['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(raw)) return false;
      problems.push(`${flag}: must be true or false, got ${JSON.stringify(raw)}`);
      return current;
    }
    case 'choice':
      if (type.values.includes(raw)) return raw;
      problems.push(`${flag}: must be one of ${type.values.join(', ')}, got ${JSON.stringify(raw)}`);
      return current;
    case 'address':
      if (isIP(raw) !== 0) return raw;
      problems.push(`${flag}: must be an IP address, got ${JSON.stringify(raw)}`);
      return current;
    case 'port': {
      const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
      if (Number.isInteger(n) && n >= 0 && n <= 65535) return n;
      problems.push(`${flag}: must be a port number between 0 and 65535, got ${JSON.stringify(raw)}`);
      return current;
    }
    default:
      // No flag of another scalar kind exists; the table test keeps it so.
      return current;
  }
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === '' ? undefined : s);

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * `--manifest-url-header` follows the kubelet: each occurrence is a comma-separated list of
 * `Name:value` pairs, values of a repeated name accumulate in order. Problems name the
 * occurrence and the header name, never the value.
 */
function headersFromFlags(raw: readonly string[], problems: string[]): Readonly<Record<string, readonly string[]>> {
  const out: Record<string, string[]> = {};
  raw.forEach((occurrence, i) => {
    for (const pair of occurrence.split(',')) {
      if (pair.trim() === '') continue;
      const colon = pair.indexOf(':');
      const name = colon < 0 ? '' : pair.slice(0, colon).trim();
      if (colon < 0 || !HEADER_NAME.test(name)) {
        problems.push(`--manifest-url-header (occurrence ${i + 1}): each entry must be Name:value with a valid header name`);
        continue;
      }
      (out[name] ??= []).push(pair.slice(colon + 1));
    }
  });
  return freezeHeaders(out);
}

function headersFromFile(value: unknown, problems: string[]): Readonly<Record<string, readonly string[]>> {
  if (value === undefined || value === null) return Object.freeze({});
  if (typeof value !== 'object' || Array.isArray(value)) {
    problems.push(`staticPodURLHeader: must be a map of header name to a list of values, got ${describeValue(value)}`);
    return Object.freeze({});
  }
  const out: Record<string, string[]> = {};
  for (const [name, values] of Object.entries(value as Record<string, unknown>)) {
    if (!HEADER_NAME.test(name)) {
      problems.push(`staticPodURLHeader: ${JSON.stringify(name)} is not a valid header name`);
      continue;
    }
    if (!Array.isArray(values) || !values.every((x) => typeof x === 'string')) {
      problems.push(`staticPodURLHeader.${name}: must be a list of strings`);
      continue;
    }
    out[name] = [...(values as string[])];
  }
  return freezeHeaders(out);
}

function freezeHeaders(h: Record<string, string[]>): Readonly<Record<string, readonly string[]>> {
  for (const k of Object.keys(h)) Object.freeze(h[k]);
  return Object.freeze(h);
}

/** `clusterDNS` from the file: a list of IP addresses. */
function dnsServersFromFile(value: unknown, problems: string[]): readonly string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    problems.push(`clusterDNS: must be a list of IP addresses, got ${describeValue(value)}`);
    return [];
  }
  return dnsServers(value as string[], 'clusterDNS', problems);
}

function dnsServers(values: readonly string[], where: string, problems: string[]): readonly string[] {
  const bad = values.filter((v) => parseIP(v) === undefined);
  if (bad.length > 0) problems.push(`${where}: not an IP address: ${bad.map((v) => JSON.stringify(v)).join(', ')}`);
  return Object.freeze(values.filter((v) => parseIP(v) !== undefined));
}
