/**
 * The configuration's types: the resolved `AgentConfig` and the flags it is resolved from. In a
 * file of their own so that the field table (fields.ts) and the loader (agent-config.ts), which
 * imports that table, both read them without importing each other.
 */

import type { Scenario } from '../scenario/scenario-types.js';

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
  readonly nodeStatusReportFrequencyMs: number;
  /** The Node's `pods` capacity. */
  readonly maxPods: number;
  readonly kubeAPIQPS: number;
  readonly kubeAPIBurst: number;
  /** Event writes per second (their own token bucket); 0: no limit. */
  readonly eventRecordQPS: number;
  readonly eventBurst: number;
  /** False: no Kubernetes Events are recorded (`--events=false`). */
  readonly events: boolean;
  /** Where the read-only and kubelet ports listen. */
  readonly address: string;
  /**
   * The kubelet port (HTTPS, authenticated), which the Node advertises
   * (`daemonEndpoints.kubeletEndpoint.Port`); 0 turns it off.
   */
  readonly port: number;
  /** The kubelet port's serving certificate and key; both undefined: a self-signed one. */
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  /** `authentication.x509.clientCAFile`: client certificates it signed authenticate. */
  readonly clientCAFile: string | undefined;
  /** `authentication.webhook.enabled`: bearer tokens are checked with a TokenReview. */
  readonly authenticationTokenWebhook: boolean;
  readonly authenticationWebhookCacheTTLMs: number;
  /** `authentication.anonymous.enabled`: requests without credentials are system:anonymous. */
  readonly anonymousAuth: boolean;
  /** `authorization.mode`. */
  readonly authorizationMode: 'AlwaysAllow' | 'Webhook';
  readonly authorizationWebhookCacheAuthorizedTTLMs: number;
  readonly authorizationWebhookCacheUnauthorizedTTLMs: number;
  /** 0 disables the read-only endpoints (`/pods`, `/metrics`, `/healthz`). */
  readonly readOnlyPort: number;
  readonly healthzBindAddress: string;
  /** 0 disables the healthz endpoint. */
  readonly healthzPort: number;
  /** `--node-ip`, or the machine's address (see `defaultNodeIP`). */
  readonly nodeIP: string;
  /** Where pods without host networking get their simulated addresses from. */
  readonly podCIDR: string;
  /** The cluster DNS servers (`clusterDNS`, `--cluster-dns`); empty when none is configured. */
  readonly clusterDNS: readonly string[];
  /** How pods live and die: as the kubelet's pod workers (`kubelet`) or at once (`instant`). */
  readonly simulatedLifecycle: SimulatedLifecycle;
  /** How simulated pods and the Node misbehave (`scenarios`, src/scenario/); none by default. */
  readonly scenarios: readonly Scenario[];
}

export type SimulatedLifecycle = 'kubelet' | 'instant';
export const SIMULATED_LIFECYCLES: readonly SimulatedLifecycle[] = Object.freeze(['kubelet', 'instant']);

/** The kubelet flags' values, as given; absent flags are undefined. */
export interface RunFlags {
  readonly kubeconfig?: string;
  readonly config?: string;
  readonly hostnameOverride?: string;
  readonly podManifestPath?: string;
  readonly manifestURL?: string;
  /** Raw `--manifest-url-header` values, one per occurrence. */
  readonly manifestURLHeader?: readonly string[];
  readonly address?: string;
  readonly port?: string;
  readonly tlsCertFile?: string;
  readonly tlsPrivateKeyFile?: string;
  readonly clientCAFile?: string;
  /** `true` or `false`, as given (`--anonymous-auth` alone is `true`). */
  readonly authenticationTokenWebhook?: string;
  readonly anonymousAuth?: string;
  readonly authorizationMode?: string;
  readonly readOnlyPort?: string;
  readonly healthzPort?: string;
  readonly nodeIP?: string;
  readonly events?: string;
  readonly podCIDR?: string;
  /** Raw `--cluster-dns` values, one per occurrence, each a comma-separated list. */
  readonly clusterDNS?: readonly string[];
  readonly simulatedLifecycle?: string;
}
