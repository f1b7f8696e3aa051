import type { AgentConfig, RunFlags } from './types.js';

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
  /**
   * The KubeletConfiguration field, when the agent honours one; a nested field as its path
   * (`authentication.x509.clientCAFile`).
   */
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
  /**
   * An integer from 0 to 65535 (a string when given as a flag). `flagsOnlyDefault`, when set,
   * is the default of an agent started without `--config`: the kubelet keeps a few legacy
   * flag defaults that differ from the KubeletConfiguration file's (`default`).
   */
  | { readonly kind: 'port'; readonly default: number; readonly flagsOnlyDefault?: number }
  /** An IP address. */
  | { readonly kind: 'address'; readonly default: string }
  /**
   * true or false (`--flag`, `--flag=false` as a flag). With `flagTakesValue`, the flag takes
   * its value as any other (`--events false`), `true` or `false` in any case.
   */
  | { readonly kind: 'boolean'; readonly default: boolean; readonly flagsOnlyDefault?: boolean; readonly flagTakesValue?: true }
  /** One of `values`. */
  | { readonly kind: 'choice'; readonly values: readonly string[]; readonly default: string; readonly flagsOnlyDefault?: string }
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
    doc: 'client rate limit; `0` turns it off. The node\'s heartbeats (its Lease, and the read and status write of its Node) skip it, as the kubelet\'s heartbeat client does',
  },
  {
    key: 'kubeAPIBurst',
    field: 'kubeAPIBurst',
    type: { kind: 'number', integer: true, max: MAX_INT32, default: 100 },
    doc: 'client burst',
  },
  {
    key: 'eventRecordQPS',
    field: 'eventRecordQPS',
    type: { kind: 'number', integer: true, max: MAX_INT32, default: 50 },
    doc: 'Event writes per second, a token bucket of their own beside `kubeAPIQPS`, as the kubelet\'s event client has; `0`: no limit',
  },
  {
    key: 'eventBurst',
    field: 'eventBurst',
    type: { kind: 'number', integer: true, max: MAX_INT32, default: 100 },
    doc: 'Event write burst (used when `eventRecordQPS` > 0)',
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
    doc: "where the read-only and kubelet ports listen (the kubelet's default is `0.0.0.0`)",
  },
  {
    key: 'port',
    flag: { name: 'port', key: 'port' },
    field: 'port',
    type: { kind: 'port', default: 10250 },
    doc: "the kubelet port: HTTPS, authenticated and authorized (see below), serving `/pods`, `/metrics`, `/healthz`, `/configz` and `/containerLogs`; reported as the Node's `daemonEndpoints.kubeletEndpoint.Port`. `0` turns it off (kubelet-pods only: the kubelet requires a port)",
  },
  {
    key: 'tlsCertFile',
    flag: { name: 'tls-cert-file', key: 'tlsCertFile' },
    field: 'tlsCertFile',
    type: { kind: 'other', defaultDoc: 'a self-signed certificate made at start' },
    doc: "the kubelet port's serving certificate (PEM, with any intermediates after it); with `tlsPrivateKeyFile`. In the file, relative to the file's folder",
  },
  {
    key: 'tlsPrivateKeyFile',
    flag: { name: 'tls-private-key-file', key: 'tlsPrivateKeyFile' },
    field: 'tlsPrivateKeyFile',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "the key of `tlsCertFile` (PEM). In the file, relative to the file's folder",
  },
  {
    key: 'clientCAFile',
    flag: { name: 'client-ca-file', key: 'clientCAFile' },
    field: 'authentication.x509.clientCAFile',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "CA bundle (PEM): a client certificate it signed authenticates on the kubelet port as its CN (user) and O (groups); none: no client certificates. In the file, relative to the file's folder",
  },
  {
    key: 'authenticationTokenWebhook',
    flag: { name: 'authentication-token-webhook', key: 'authenticationTokenWebhook' },
    field: 'authentication.webhook.enabled',
    type: { kind: 'boolean', default: true, flagsOnlyDefault: false },
    doc: 'bearer tokens on the kubelet port are checked with a TokenReview in the API server. As the kubelet: off when started with flags only, on when a `--config` file leaves it unset',
  },
  {
    key: 'authenticationWebhookCacheTTLMs',
    field: 'authentication.webhook.cacheTTL',
    type: { kind: 'duration', allowZero: true, default: 120_000 },
    doc: 'how long a TokenReview answer is reused; `0` asks every time',
  },
  {
    key: 'anonymousAuth',
    flag: { name: 'anonymous-auth', key: 'anonymousAuth' },
    field: 'authentication.anonymous.enabled',
    type: { kind: 'boolean', default: false, flagsOnlyDefault: true },
    doc: 'requests to the kubelet port without credentials are `system:anonymous` (group `system:unauthenticated`) instead of refused with 401. As the kubelet: on when started with flags only, off when a `--config` file leaves it unset',
  },
  {
    key: 'authorizationMode',
    flag: { name: 'authorization-mode', key: 'authorizationMode' },
    field: 'authorization.mode',
    type: { kind: 'choice', values: ['AlwaysAllow', 'Webhook'], default: 'Webhook', flagsOnlyDefault: 'AlwaysAllow' },
    doc: "`Webhook`: every request to the kubelet port is authorized with a SubjectAccessReview (`nodes/<subresource>` as the kubelet maps paths); `AlwaysAllow`: every authenticated request is allowed. As the kubelet: `AlwaysAllow` when started with flags only, `Webhook` when a `--config` file leaves it unset",
  },
  {
    key: 'authorizationWebhookCacheAuthorizedTTLMs',
    field: 'authorization.webhook.cacheAuthorizedTTL',
    type: { kind: 'duration', allowZero: true, default: 300_000 },
    doc: 'how long an allowing SubjectAccessReview answer is reused; `0` asks every time',
  },
  {
    key: 'authorizationWebhookCacheUnauthorizedTTLMs',
    field: 'authorization.webhook.cacheUnauthorizedTTL',
    type: { kind: 'duration', allowZero: true, default: 30_000 },
    doc: 'how long a denying SubjectAccessReview answer is reused; `0` asks every time',
  },
  {
    key: 'readOnlyPort',
    flag: { name: 'read-only-port', key: 'readOnlyPort' },
    field: 'readOnlyPort',
    type: { kind: 'port', default: 0, flagsOnlyDefault: 10255 },
    doc: "`/pods`, `/metrics`, `/healthz` over plain HTTP, unauthenticated; `0` disables them. As the kubelet: `10255` when started with flags only, `0` when a `--config` file leaves it unset",
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
    key: 'events',
    flag: { name: 'events', key: 'events' },
    type: { kind: 'boolean', default: true, flagTakesValue: true },
    doc: 'record Kubernetes Events about static and mirror pods on the Node and the mirror pods (docs/events.md); `false` records none. Ours, not the kubelet\'s: a flag only, so a kubelet\'s configuration file stays valid for the kubelet',
  },
  {
    key: 'podCIDR',
    flag: { name: 'pod-cidr', key: 'podCIDR' },
    field: 'podCIDR',
    type: { kind: 'other', defaultDoc: '`10.88.0.0/16`' },
    doc: 'the range pods without host networking get their (simulated) addresses from, one per pod, derived from its UID',
  },
  {
    key: 'clusterDNS',
    flag: { name: 'cluster-dns', key: 'clusterDNS', multiple: true },
    field: 'clusterDNS',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "the cluster DNS servers' IP addresses (a comma-separated list as a flag). kubelet-pods configures no DNS, but without them a pod with `dnsPolicy: ClusterFirst` gets the kubelet's `MissingClusterDNS` warning on the pod and the Node at each start, as from the kubelet",
  },
  {
    key: 'simulatedLifecycle',
    flag: { name: 'simulated-lifecycle', key: 'simulatedLifecycle' },
    field: 'simulatedLifecycle',
    type: { kind: 'choice', values: ['kubelet', 'instant'], default: 'kubelet' },
    doc: "kubelet-pods' own: `kubelet` lives each pod's life as the kubelet's pod workers do (graceful termination, one running static pod per full name, mirrors replaced or deleted only once the old pod has stopped; docs/lifecycle.md); `instant` replaces and deletes mirrors at once, for benchmarks and users who want speed over fidelity",
  },
  {
    key: 'scenarios',
    field: 'scenarios',
    type: { kind: 'other', defaultDoc: 'none' },
    doc: "kubelet-pods' own: how the simulated pods and the Node misbehave, by selector and fraction instead of per-pod annotations (crash loops, OOM kills, failing image pulls, slow starts and stops, failing readiness, a NotReady or pressure window); docs/lifecycle.md, \"Scenarios\". A file field only",
  },
] satisfies ConfigField[]);

/** The fields with a scalar type, in table order. */
export function scalarFields(): Array<ConfigField & { readonly type: ScalarFieldType }> {
  return CONFIG_FIELDS.filter((f): f is ConfigField & { readonly type: ScalarFieldType } => f.type.kind !== 'other');
}
