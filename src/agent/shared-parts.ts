import type { V1Taint } from '@kubernetes/client-node';
import type { ApiClients, LeaseApi } from '../kube/api-clients.js';
import type { MachineInfo } from '../node/machine-info.js';
import type { NodeApi } from '../node/node-registration.js';
import type { LoopSpread } from '../node/periodic-loop.js';
import type { PodListWatch } from '../sources/pod-list-watch.js';
import type { FileSource, FileSourceOptions } from '../sources/file-source.js';

/**
 * Parts that many nodes of one process share (`kubelet-pods fleet`, src/fleet/), handed to each
 * node's agent. Each part left out is made by the agent for itself, as `kubelet-pods run` does.
 * The clock, the status provider and the metrics registry are shared through the agent's own
 * `clock`, `statusProvider` and `registry` options.
 */
export interface AgentSharedParts {
  /**
   * The API clients (with the process's connection pool and rate limiters) to use instead of
   * clients made from `config.kubeconfig`; `config.kubeconfig` must still be set, as it says
   * that the agent is connected.
   */
  readonly apis?: ApiClients;
  /** This node's pods from one watch of the whole process (src/fleet/pod-fan-out.ts). */
  readonly podListWatch?: (nodeName: string) => PodListWatch;
  /** Makes the `file` source (several directories, one watch per directory for the process). */
  readonly createFileSource?: (options: FileSourceOptions) => FileSource;
  /**
   * The Node calls of node registration: the fleet answers its reads from one watch of the
   * fleet's Nodes instead of a GET per node every 10 s (src/fleet/node-cache.ts).
   */
  readonly nodeApi?: NodeApi;
  /**
   * The Lease calls of the node lease: the fleet's lean JSON client (src/kube/lease-client.ts)
   * instead of client-node's, for the 0.1 renewals per node per second that are most of an
   * idle fleet's requests.
   */
  readonly leaseApi?: LeaseApi;
  /** The machine every node reports as capacity and nodeInfo, read once for the process. */
  readonly machine?: MachineInfo;
}

/** What one node of many looks like and how its loops keep off the others' beat. */
export interface AgentNodeOptions {
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly V1Taint[];
  /** Replaces the machine's resources in the Node's capacity. */
  readonly capacity?: Readonly<Record<string, string>>;
  readonly allocatable?: Readonly<Record<string, string>>;
  /** Spreads the Lease renewals and Node status updates of many nodes. */
  readonly spread?: LoopSpread;
  /**
   * The Lease's holder when replicas share nodes by Lease (the replica's identity); the node
   * name by default. With it, a Lease another holder renewed is never written and
   * `onLeaseLost` is told (the fleet then stops this node's agent).
   */
  readonly leaseHolder?: string;
  readonly onLeaseLost?: (holder: string) => void;
  /** Each successful Lease write, with the renewTime it wrote (the fleet's fencing). */
  readonly onLeaseRenewed?: (renewTime: Date) => void;
}
