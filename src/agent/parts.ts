import type { Registry } from 'prom-client';
import type { AgentConfig } from '../config/agent-config.js';
import { createApiClients, type ApiClients, type LeaseApi } from '../kube/api-clients.js';
import { loadKubeConfigFile } from '../kube/kubeconfig-file.js';
import { createTokenBucket } from '../kube/rate-limiter.js';
import { DEFAULT_REQUEST_TIMEOUTS } from '../kube/request-timeout.js';
import { readMachineInfo, type MachineInfo } from '../node/machine-info.js';
import type { Logger } from '../logger.js';
import type { NodeApi } from '../node/node-registration.js';
import { createNodeWatch, kubeOwnNodeListWatch, type NodeWatch } from '../node/node-watch.js';
import type { ApiserverSourceOptions } from '../sources/apiserver-source.js';
import { createFileSource, type FileSource, type FileSourceOptions } from '../sources/file-source.js';
import { createHttpSource, type HttpSource, type HttpSourceOptions } from '../sources/http-source.js';
import type { UsageOverride } from '../runtime/resource-usage.js';
import { createSimulatedStatusProvider } from '../runtime/simulated-runtime.js';
import { newRegistry } from '../server/metrics.js';
import { ownNodeLabels } from './node-scenarios.js';
import type { StatusProvider } from '../status/status-provider.js';
import { realClock, type Clock } from '../time/clock.js';

/**
 * Every replaceable part of one node's agent, in one object. `defaultParts` makes what
 * `kubelet-pods run` uses; the fleet (src/fleet/fleet.ts) and tests override some. The agent
 * reads its parts from here only, so sharing another part across a fleet means a field here,
 * its default below and the fleet's override, never a change in the agent's body.
 */
export interface AgentParts {
  /** The one time source: periods, retries, timestamps, the shutdown bound (a FakeClock in tests). */
  readonly clock: Clock;
  /** Makes the registry that shows the node's metrics on its /metrics; asked once, at the first need. */
  readonly registry: () => Registry;
  /**
   * This node's runtime (statuses, terminations, container logs), given what the runtime may
   * ask the node. A factory because the question goes to the pod workers, made after it.
   */
  readonly statusProvider: (node: RuntimeQuestions) => StatusProvider;
  /**
   * What a running container uses, asked before its `simulation.kubelet-pods.io/usage`
   * annotation and the default share of its requests (src/runtime/resource-usage.ts); none by default.
   */
  readonly usageOverride?: UsageOverride;
  /** Makes the `file` source (the fleet's reads several directories over shared watches). */
  readonly createFileSource: (options: FileSourceOptions) => FileSource;
  /** Makes the `http` source. */
  readonly createHttpSource: (options: HttpSourceOptions) => HttpSource;
  /** The parts that talk to the API server; undefined without a kubeconfig (standalone). */
  readonly cluster: ClusterParts | undefined;
}

/** What the runtime asks the node it runs for. */
export interface RuntimeQuestions {
  /** The container GC's question: may this pod's exited containers go (kubelet: PodCouldHaveRunningContainers)? */
  shouldPodContentBeRemoved(uid: string): boolean;
}

export interface ClusterParts {
  /** The typed clients, over one rate limiter and connection pool. */
  readonly apis: ApiClients;
  /** How the API source lists and watches this node's pods: the node's own watch, or a given one. */
  readonly podListWatch: Pick<ApiserverSourceOptions, 'kubeConfig' | 'listWatch'>;
  /** The Node calls of node registration. */
  readonly nodeApi: NodeApi;
  /**
   * The node's watch of its own Node, logging to the given logger: a reflector of its own by
   * default, the fleet's one watch of Nodes in a fleet (src/fleet/node-cache.ts).
   */
  readonly nodeWatch: (logger: Logger) => NodeWatch;
  /** The Lease calls of the node lease. */
  readonly leaseApi: LeaseApi;
  /** The machine the Node reports as capacity and nodeInfo. */
  readonly machine: MachineInfo;
}

/** What a caller may replace: any part, the cluster's one by one. */
export type AgentPartOverrides = Partial<Omit<AgentParts, 'cluster'> & ClusterParts>;

/**
 * The parts of `kubelet-pods run`, with `overrides` in their place. The cluster parts exist
 * only with `config.kubeconfig`, even when overridden: the kubeconfig says the agent is connected.
 */
export function defaultParts(config: AgentConfig, overrides: AgentPartOverrides = {}): AgentParts {
  const clock = overrides.clock ?? realClock;
  return {
    clock,
    registry: overrides.registry ?? newRegistry,
    statusProvider:
      overrides.statusProvider ??
      ((node) =>
        createSimulatedStatusProvider({
          clock,
          hostIP: config.nodeIP,
          podCIDR: config.podCIDR,
          clusterDNS: config.clusterDNS,
          scenarios: config.scenarios,
          nodeLabels: (name) => (name === config.nodeName ? ownNodeLabels(name) : undefined),
          shouldPodContentBeRemoved: (uid) => node.shouldPodContentBeRemoved(uid),
        })),
    ...(overrides.usageOverride !== undefined ? { usageOverride: overrides.usageOverride } : {}),
    createFileSource: overrides.createFileSource ?? createFileSource,
    createHttpSource: overrides.createHttpSource ?? createHttpSource,
    cluster: config.kubeconfig === undefined || config.kubeconfig === '' ? undefined : clusterParts(config, config.kubeconfig, clock, overrides),
  };
}

function clusterParts(config: AgentConfig, kubeconfig: string, clock: Clock, overrides: AgentPartOverrides): ClusterParts {
  const apis = overrides.apis ?? nodeApiClients(config, kubeconfig, clock);
  return {
    apis,
    podListWatch: overrides.podListWatch ?? { kubeConfig: apis.kubeConfig },
    nodeApi: overrides.nodeApi ?? apis.core,
    nodeWatch:
      overrides.nodeWatch ??
      ((logger) => createNodeWatch({ nodeName: config.nodeName, listWatch: kubeOwnNodeListWatch(apis.kubeConfig, apis.core, config.nodeName), clock, logger })),
    leaseApi: overrides.leaseApi ?? apis.coordination,
    machine: overrides.machine ?? readMachineInfo(),
  };
}

/** The node's own clients from its kubeconfig, with its own token buckets. */
function nodeApiClients(config: AgentConfig, kubeconfig: string, clock: Clock): ApiClients {
  const loaded = loadKubeConfigFile(kubeconfig);
  return createApiClients(loaded.kubeConfig, createTokenBucket({ qps: config.kubeAPIQPS, burst: config.kubeAPIBurst, clock }), {
    eventLimiter: createTokenBucket({ qps: config.eventRecordQPS, burst: config.eventBurst, clock }),
    ...(loaded.tokenFile !== undefined ? { tokenFile: loaded.tokenFile } : {}),
    // As the kubelet's heartbeat client: the shorter of the status period and the Lease's 40 s.
    timeouts: { ...DEFAULT_REQUEST_TIMEOUTS, heartbeatMs: Math.min(config.nodeStatusUpdateFrequencyMs, 40_000) },
  });
}
