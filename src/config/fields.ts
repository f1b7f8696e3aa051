import type { AgentConfig, RunFlags } from './agent-config.js';

/**
 * The one table of what `kubelet-pods run` can be told, in the kubelet's own names. Everything
 * else follows from it: the flags `parseRunArgs` accepts (and the help text lists, in this
 * order), the KubeletConfiguration fields that are honoured (any other field in the file is
 * reported as ignored), the defaults (`AGENT_CONFIG_DEFAULTS`), how each value is checked, and
 * the table in docs/configuration.md (test/unit/config/fields.test.ts keeps the doc in step).
 */
export interface ConfigField {
  /** The property of the resolved `AgentConfig`. */
  readonly key: keyof AgentConfig;
  /** The kubelet flag, without the dashes, when the agent takes one. */
  readonly flag?: { readonly name: string; readonly key: keyof RunFlags; readonly multiple?: boolean };
  /** The KubeletConfiguration field, when the agent honours one. */
  readonly field?: string;
  readonly type: FieldType;
  /** What the value does, as the docs say it (one table cell of Markdown). */
  readonly doc: string;
}

/**
 * How a value is checked. The scalar kinds carry their default and are resolved the same way
 * (the file over the default, then the flag over the file); the others each have a rule of
 * their own in `resolveAgentConfig` and describe their default in words.
 */
export type FieldType =
  /** A Go duration string; the default and the result are milliseconds. */
  | { readonly kind: 'duration'; readonly allowZero: boolean; readonly default: number }
  /** A YAML number from 0 to `max`. */
  | { readonly kind: 'number'; readonly integer: boolean; readonly max: number; readonly default: number }
  /** An integer from 0 to 65535 (a string when given as a flag). */
  | { readonly kind: 'port'; readonly default: number }
  /** An IP address. */
  | { readonly kind: 'address'; readonly default: string }
  /** A path, a URL, the headers, the node name: checked by their own rules. */
  | { readonly kind: 'other'; readonly defaultDoc: string };

export type ScalarFieldType = Exclude<FieldType, { kind: 'other' }>;

const MAX_INT32 = 2 ** 31 - 1;

// The order is the order of the help text's flags and of the problems in a configuration error.
export const CONFIG_FIELDS: readonly ConfigField[] = Object.freeze([
  {
    key: 'kubeconfig',
    flag: { name: 'kubeconfig', key: 'kubeconfig' },
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "the API server and the node's credentials; without it the agent runs standalone: no Node, Lease, mirror pods or status",
  },
  {
    key: 'configFile',
    flag: { name: 'config', key: 'config' },
    type: { kind: 'other', defaultDoc: 'none' },
    doc: 'the `KubeletConfiguration` file; without it, defaults and flags only',
  },
  {
    key: 'nodeName',
    flag: { name: 'hostname-override', key: 'hostnameOverride' },
    type: { kind: 'other', defaultDoc: '`os.hostname()`' },
    doc: 'the node name, trimmed and lower-cased, as the kubelet does',
  },
  {
    key: 'staticPodPath',
    flag: { name: 'pod-manifest-path', key: 'podManifestPath' },
    field: 'staticPodPath',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "the file source's directory (or file); none: no file source. In the file, relative to the file's folder",
  },
  {
    key: 'staticPodURL',
    flag: { name: 'manifest-url', key: 'manifestURL' },
    field: 'staticPodURL',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "the HTTP source's URL; none: no HTTP source",
  },
  {
    key: 'staticPodURLHeader',
    flag: { name: 'manifest-url-header', key: 'manifestURLHeader', multiple: true },
    field: 'staticPodURLHeader',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: 'headers sent to the manifest URL (see below)',
  },
  {
    key: 'fileCheckFrequencyMs',
    field: 'fileCheckFrequency',
    type: { kind: 'duration', allowZero: true, default: 20_000 },
    doc: 'file source rescan period',
  },
  {
    key: 'httpCheckFrequencyMs',
    field: 'httpCheckFrequency',
    type: { kind: 'duration', allowZero: true, default: 20_000 },
    doc: 'HTTP source poll period',
  },
  {
    key: 'syncFrequencyMs',
    field: 'syncFrequency',
    type: { kind: 'duration', allowZero: false, default: 60_000 },
    doc: 'periodic resync of all pods',
  },
  {
    key: 'nodeStatusUpdateFrequencyMs',
    field: 'nodeStatusUpdateFrequency',
    type: { kind: 'duration', allowZero: false, default: 10_000 },
    doc: 'how often the Node status is computed (and written if it changed)',
  },
  {
    key: 'nodeStatusReportFrequencyMs',
    field: 'nodeStatusReportFrequency',
    type: { kind: 'duration', allowZero: false, default: 300_000 },
    doc: 'how often the Node status is written when nothing in it changed; the Lease is the heartbeat in between',
  },
  {
    key: 'maxPods',
    field: 'maxPods',
    type: { kind: 'number', integer: true, max: MAX_INT32, default: 110 },
    doc: "the Node's `pods` capacity; static pods beyond it are rejected (`Failed`, `UnexpectedAdmissionError`)",
  },
  {
    key: 'kubeAPIQPS',
    field: 'kubeAPIQPS',
    type: { kind: 'number', integer: false, max: Number.MAX_SAFE_INTEGER, default: 50 },
    doc: 'client rate limit; `0` turns it off',
  },
  {
    key: 'kubeAPIBurst',
    field: 'kubeAPIBurst',
    type: { kind: 'number', integer: true, max: MAX_INT32, default: 100 },
    doc: 'client burst',
  },
  {
    key: 'healthzBindAddress',
    field: 'healthzBindAddress',
    type: { kind: 'address', default: '127.0.0.1' },
    doc: 'where the healthz port listens',
  },
  {
    key: 'address',
    flag: { name: 'address', key: 'address' },
    field: 'address',
    type: { kind: 'address', default: '127.0.0.1' },
    doc: "where the read-only port listens (the kubelet's default is `0.0.0.0`)",
  },
  {
    key: 'port',
    flag: { name: 'port', key: 'port' },
    field: 'port',
    type: { kind: 'port', default: 10250 },
    doc: "reported as the Node's `daemonEndpoints.kubeletEndpoint.Port`; nothing listens on it (kubelet-pods serves no kubelet API)",
  },
  {
    key: 'readOnlyPort',
    flag: { name: 'read-only-port', key: 'readOnlyPort' },
    field: 'readOnlyPort',
    type: { kind: 'port', default: 0 },
    doc: '`/pods`, `/metrics`, `/healthz`; `0` disables them',
  },
  {
    key: 'healthzPort',
    flag: { name: 'healthz-port', key: 'healthzPort' },
    field: 'healthzPort',
    type: { kind: 'port', default: 10248 },
    doc: '`/healthz`; `0` disables it',
  },
  {
    key: 'nodeIP',
    flag: { name: 'node-ip', key: 'nodeIP' },
    type: { kind: 'other', defaultDoc: "the machine's first non-internal IPv4 address (see below)" },
    doc: "the node's address: every pod's `hostIP`, and the pod IP of host-network pods. One address; `0.0.0.0` or `::` picks the machine's address of that family",
  },
  {
    key: 'podCIDR',
    flag: { name: 'pod-cidr', key: 'podCIDR' },
    field: 'podCIDR',
    type: { kind: 'other', defaultDoc: '`10.88.0.0/16`' },
    doc: 'the range pods without host networking get their (simulated) addresses from, one per pod, derived from its UID',
  },
  {
    key: 'simulatedLifecycle',
    flag: { name: 'simulated-lifecycle', key: 'simulatedLifecycle' },
    field: 'simulatedLifecycle',
    type: { kind: 'other', defaultDoc: '`kubelet`' },
    doc: "kubelet-pods' own: `kubelet` lives each pod's life as the kubelet's pod workers do (graceful termination, one running static pod per full name, mirrors replaced or deleted only once the old pod has stopped; docs/lifecycle.md); `instant` replaces and deletes mirrors at once, for benchmarks and users who want speed over fidelity",
  },
] satisfies ConfigField[]);

/** The fields with a scalar type, in table order. */
export function scalarFields(): Array<ConfigField & { readonly type: ScalarFieldType }> {
  return CONFIG_FIELDS.filter((f): f is ConfigField & { readonly type: ScalarFieldType } => f.type.kind !== 'other');
}
