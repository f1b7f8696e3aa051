import type { V1Taint } from '@kubernetes/client-node';
import type { LoopSpread } from '../node/periodic-loop.js';

/**
 * What one node of many looks like and how its loops keep off the others' beat (the fleet's
 * templates). Settings of this node, not replaceable parts: those are in AgentParts (parts.ts).
 */
export interface AgentNodeOptions {
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly V1Taint[];
  /**
   * The Node was created by someone else and this node takes it over (a fleet's adopted node):
   * never created, its labels, taints and resources kept (node registration's `adopted`).
   */
  readonly adopted?: boolean;
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
