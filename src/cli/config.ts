import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { dirname, resolve as resolvePath } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { kpError } from '../errors.js';
import { parseDuration } from './durations.js';

/**
 * Configuration of `kubelet-pods run`: a KubeletConfiguration file (`--config`) merged with the
 * kubelet-named flags, flags winning. Only the fields that matter to static and mirror pods are
 * honoured; every other field present in the file is reported back in `ignoredFields` so the
 * agent can say so once at start. See docs/configuration.md.
 */

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

/** The validated, frozen result. Durations are milliseconds. */
export interface AgentConfig {
  /** `--hostname-override` or the host name, lower-cased. */
  readonly nodeName: string;
  readonly kubeconfig: string | undefined;
  /** The `--config` file, when one was given. */
  readonly configFile: string | undefined;
  readonly staticPodPath: string | undefined;
  readonly staticPodURL: string | undefined;
  /** Header name → values, in the order given. Values are secrets: never log them. */
  readonly staticPodURLHeader: Readonly<Record<string, readonly string[]>>;
  readonly fileCheckFrequencyMs: number;
  readonly httpCheckFrequencyMs: number;
  readonly syncFrequencyMs: number;
  readonly nodeStatusUpdateFrequencyMs: number;
  readonly kubeAPIQPS: number;
  readonly kubeAPIBurst: number;
  /** Where the read-only port listens. */
  readonly address: string;
  /** 0 disables the read-only endpoints (`/pods`, `/metrics`, `/healthz`). */
  readonly readOnlyPort: number;
  readonly healthzBindAddress: string;
  /** 0 disables the healthz endpoint. */
  readonly healthzPort: number;
}

export interface LoadedAgentConfig {
  readonly config: AgentConfig;
  /** Top-level fields of the file that kubelet-pods does not act on, sorted. */
  readonly ignoredFields: readonly string[];
}

/** The flags of `kubelet-pods run`, as parsed; absent flags are undefined. */
export interface RunFlags {
  readonly kubeconfig?: string;
  readonly config?: string;
  readonly hostnameOverride?: string;
  readonly podManifestPath?: string;
  readonly manifestURL?: string;
  /** Raw `--manifest-url-header` values, one per occurrence. */
  readonly manifestURLHeader?: readonly string[];
  readonly address?: string;
  readonly readOnlyPort?: string;
  readonly healthzPort?: string;
}

/**
 * The kubelet's defaults for the honoured fields, except `address`: the kubelet listens on
 * 0.0.0.0, we listen on loopback unless told otherwise, so that starting the agent does not
 * expose the pod list to the network by surprise.
 */
export const AGENT_CONFIG_DEFAULTS = Object.freeze({
  fileCheckFrequencyMs: 20_000,
  httpCheckFrequencyMs: 20_000,
  syncFrequencyMs: 60_000,
  nodeStatusUpdateFrequencyMs: 10_000,
  kubeAPIQPS: 50,
  kubeAPIBurst: 100,
  address: '127.0.0.1',
  readOnlyPort: 0,
  healthzBindAddress: '127.0.0.1',
  healthzPort: 10248,
});

const HONOURED_FIELDS = new Set([
  'apiVersion',
  'kind',
  'staticPodPath',
  'staticPodURL',
  'staticPodURLHeader',
  'fileCheckFrequency',
  'httpCheckFrequency',
  'syncFrequency',
  'nodeStatusUpdateFrequency',
  'kubeAPIQPS',
  'kubeAPIBurst',
  'address',
  'readOnlyPort',
  'healthzPort',
  'healthzBindAddress',
]);

const FLAG_SPEC = {
  kubeconfig: { type: 'string' },
  config: { type: 'string' },
  'hostname-override': { type: 'string' },
  'pod-manifest-path': { type: 'string' },
  'manifest-url': { type: 'string' },
  'manifest-url-header': { type: 'string', multiple: true },
  address: { type: 'string' },
  'read-only-port': { type: 'string' },
  'healthz-port': { type: 'string' },
} as const;

/** The flag names `parseRunArgs` accepts, for the CLI's help text. */
export const RUN_FLAG_NAMES: readonly string[] = Object.freeze(Object.keys(FLAG_SPEC).map((f) => `--${f}`));

/**
 * Parses the arguments after `run` (`--flag value` and `--flag=value` both work). Unknown
 * flags, positional arguments and flags without a value are all reported at once in a
 * `KP_ERR_CONFIG_FLAGS` error.
 */
export function parseRunArgs(argv: readonly string[]): RunFlags {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: FLAG_SPEC, strict: false, allowPositionals: true, tokens: true });
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_FLAGS', [[(err as Error).message]], { cause: err });
  }
  const problems: string[] = [];
  for (const token of parsed.tokens ?? []) {
    if (token.kind === 'positional') {
      problems.push(`unexpected argument ${JSON.stringify(token.value)}`);
    } else if (token.kind === 'option') {
      if (!(token.name in FLAG_SPEC)) problems.push(`unknown flag ${token.rawName}`);
      else if (token.value === undefined) problems.push(`flag ${token.rawName} needs a value`);
      // `--kubeconfig --config=x` would otherwise take the next flag as the value.
      else if (token.inlineValue === false && token.value.startsWith('--')) {
        problems.push(`flag ${token.rawName} needs a value (got the flag ${token.value.split('=')[0]})`);
      }
    }
  }
  if (problems.length > 0) throw kpError('KP_ERR_CONFIG_FLAGS', [problems]);
  const v = parsed.values as Record<string, string | string[] | boolean | undefined>;
  const str = (name: string): string | undefined => (typeof v[name] === 'string' ? (v[name] as string) : undefined);
  const headers = v['manifest-url-header'];
  const flags: Record<string, unknown> = {
    kubeconfig: str('kubeconfig'),
    config: str('config'),
    hostnameOverride: str('hostname-override'),
    podManifestPath: str('pod-manifest-path'),
    manifestURL: str('manifest-url'),
    manifestURLHeader: Array.isArray(headers) ? headers.filter((h) => typeof h === 'string') : undefined,
    address: str('address'),
    readOnlyPort: str('read-only-port'),
    healthzPort: str('healthz-port'),
  };
  for (const key of Object.keys(flags)) if (flags[key] === undefined) delete flags[key];
  return Object.freeze(flags) as RunFlags;
}

export interface LoadAgentConfigOptions {
  /** Reads the `--config` file; `fs.readFile` by default. */
  readFile?: (path: string) => Promise<string>;
  /** The host name used when there is no `--hostname-override`; `os.hostname()` by default. */
  hostname?: () => string;
}

/**
 * Loads the `--config` file (if any), applies the flags over it and the defaults under both,
 * and validates the result. Problems in the file are reported together in one
 * `KP_ERR_CONFIG_INVALID` naming the file; problems in flags in one `KP_ERR_CONFIG_FLAGS`.
 * Header values never appear in either.
 */
export async function loadAgentConfig(flags: RunFlags, options: LoadAgentConfigOptions = {}): Promise<LoadedAgentConfig> {
  let file: Record<string, unknown> = {};
  let ignoredFields: string[] = [];
  if (flags.config !== undefined) {
    const read = options.readFile ?? ((p: string) => readFile(p, 'utf8'));
    let text: string;
    try {
      text = await read(flags.config);
    } catch (err) {
      throw kpError('KP_ERR_CONFIG_READ', [flags.config], { cause: err });
    }
    file = decodeConfigFile(flags.config, text);
    ignoredFields = Object.keys(file)
      .filter((k) => !HONOURED_FIELDS.has(k))
      .sort();
  }
  const config = mergeConfig(flags.config ?? '', file, flags, options.hostname ?? osHostname);
  return Object.freeze({ config, ignoredFields: Object.freeze(ignoredFields) });
}

/** `parseRunArgs` then `loadAgentConfig`: what `kubelet-pods run <args>` needs. */
export async function resolveRunConfig(argv: readonly string[], options: LoadAgentConfigOptions = {}): Promise<LoadedAgentConfig> {
  return loadAgentConfig(parseRunArgs(argv), options);
}

/** The one-line notice the agent prints at start when the file has fields it does not act on. */
export function describeIgnoredFields(ignoredFields: readonly string[]): string | undefined {
  if (ignoredFields.length === 0) return undefined;
  return `kubelet configuration fields ignored by kubelet-pods: ${ignoredFields.join(', ')}`;
}

function decodeConfigFile(path: string, text: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_INVALID', [path, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]], {
      cause: err,
    });
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw kpError('KP_ERR_CONFIG_INVALID', [path, ['the file must contain a KubeletConfiguration object']]);
  }
  const obj = doc as Record<string, unknown>;
  const problems: string[] = [];
  if (obj.apiVersion !== KUBELET_CONFIG_API_VERSION) {
    problems.push(`apiVersion: must be ${JSON.stringify(KUBELET_CONFIG_API_VERSION)}, got ${describe(obj.apiVersion)}`);
  }
  if (obj.kind !== KUBELET_CONFIG_KIND) {
    problems.push(`kind: must be ${JSON.stringify(KUBELET_CONFIG_KIND)}, got ${describe(obj.kind)}`);
  }
  if (problems.length > 0) throw kpError('KP_ERR_CONFIG_INVALID', [path, problems]);
  return obj;
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : typeof value;
}

// Collects problems per origin (file fields vs flags) so each error names where to look.
class Problems {
  readonly file: string[] = [];
  readonly flags: string[] = [];
}

function mergeConfig(path: string, file: Record<string, unknown>, flags: RunFlags, hostname: () => string): AgentConfig {
  const p = new Problems();

  const fileString = (field: string): string | undefined => {
    const v = file[field];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      p.file.push(`${field}: must be a string, got ${describe(v)}`);
      return undefined;
    }
    return v;
  };
  const fileDuration = (field: string, allowZero: boolean, fallback: number): number => {
    const v = file[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'string') {
      p.file.push(`${field}: must be a duration string such as "20s", got ${describe(v)}`);
      return fallback;
    }
    let ms: number;
    try {
      ms = parseDuration(v);
    } catch {
      p.file.push(`${field}: ${JSON.stringify(v)} is not a duration (use Go syntax such as "20s", "1m0s")`);
      return fallback;
    }
    if (ms < 0 || (!allowZero && ms === 0)) {
      p.file.push(`${field}: must be ${allowZero ? 'zero or positive' : 'positive'}, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return ms;
  };
  const fileNumber = (field: string, integer: boolean, max: number, fallback: number): number => {
    const v = file[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      p.file.push(`${field}: must be a number, got ${describe(v)}`);
      return fallback;
    }
    if (integer && !Number.isInteger(v)) {
      p.file.push(`${field}: must be an integer, got ${v}`);
      return fallback;
    }
    if (v < 0 || v > max) {
      p.file.push(`${field}: must be between 0 and ${max}, got ${v}`);
      return fallback;
    }
    return v;
  };
  const fileAddress = (field: string, fallback: string): string => {
    const v = fileString(field);
    if (v === undefined || v === '') return fallback;
    if (isIP(v) === 0) {
      p.file.push(`${field}: must be an IP address, got ${JSON.stringify(v)}`);
      return fallback;
    }
    return v;
  };
  const flagPort = (flag: string, value: string | undefined, fallback: number): number => {
    if (value === undefined) return fallback;
    const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!Number.isInteger(n) || n < 0 || n > 65535) {
      p.flags.push(`${flag}: must be a port number between 0 and 65535, got ${JSON.stringify(value)}`);
      return fallback;
    }
    return n;
  };

  const d = AGENT_CONFIG_DEFAULTS;
  // Durations and limits exist only in the file.
  const fileCheckFrequencyMs = fileDuration('fileCheckFrequency', true, d.fileCheckFrequencyMs);
  const httpCheckFrequencyMs = fileDuration('httpCheckFrequency', true, d.httpCheckFrequencyMs);
  const syncFrequencyMs = fileDuration('syncFrequency', false, d.syncFrequencyMs);
  const nodeStatusUpdateFrequencyMs = fileDuration('nodeStatusUpdateFrequency', false, d.nodeStatusUpdateFrequencyMs);
  const kubeAPIQPS = fileNumber('kubeAPIQPS', false, Number.MAX_SAFE_INTEGER, d.kubeAPIQPS);
  const kubeAPIBurst = fileNumber('kubeAPIBurst', true, 2 ** 31 - 1, d.kubeAPIBurst);
  const healthzBindAddress = fileAddress('healthzBindAddress', d.healthzBindAddress);

  let address = fileAddress('address', d.address);
  if (flags.address !== undefined) {
    if (isIP(flags.address) === 0) p.flags.push(`--address: must be an IP address, got ${JSON.stringify(flags.address)}`);
    else address = flags.address;
  }
  const readOnlyPort = flagPort('--read-only-port', flags.readOnlyPort, fileNumber('readOnlyPort', true, 65535, d.readOnlyPort));
  const healthzPort = flagPort('--healthz-port', flags.healthzPort, fileNumber('healthzPort', true, 65535, d.healthzPort));

  // As the kubelet does, a relative staticPodPath in the file is relative to the file's folder;
  // one given as a flag is relative to the working directory.
  const flagPath = nonEmpty(flags.podManifestPath);
  const filePath = nonEmpty(fileString('staticPodPath'));
  const staticPodPath =
    flagPath !== undefined ? resolvePath(flagPath) : filePath !== undefined ? resolvePath(dirname(path), filePath) : undefined;
  const staticPodURL = nonEmpty(flags.manifestURL) ?? nonEmpty(fileString('staticPodURL'));
  const staticPodURLHeader =
    flags.manifestURLHeader !== undefined
      ? headersFromFlags(flags.manifestURLHeader, p.flags)
      : headersFromFile(file.staticPodURLHeader, p.file);

  const rawName = flags.hostnameOverride !== undefined ? flags.hostnameOverride : hostname();
  // The kubelet trims and lower-cases the host name before using it as the node name.
  const nodeName = rawName.trim().toLowerCase();
  if (nodeName === '') p.flags.push('--hostname-override: the node name must not be empty');

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
    fileCheckFrequencyMs,
    httpCheckFrequencyMs,
    syncFrequencyMs,
    nodeStatusUpdateFrequencyMs,
    kubeAPIQPS,
    kubeAPIBurst,
    address,
    readOnlyPort,
    healthzBindAddress,
    healthzPort,
  });
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
    problems.push(`staticPodURLHeader: must be a map of header name to a list of values, got ${describe(value)}`);
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
