/**
 * Scenarios as data (docs/lifecycle.md, "Scenarios"): which pods or nodes misbehave, and how,
 * said once in the configuration instead of on every pod. The parsed, checked, frozen shapes;
 * `parse-scenarios.ts` builds them, `select.ts` decides what each one picks.
 */

/** What a scenario picks. Every given part must match; an empty selector picks everything. */
export interface ScenarioMatch {
  /** Namespace patterns (`*` globs); any one may match. */
  readonly namespaces?: readonly string[];
  /** Labels the pod must carry, each with exactly this value. */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * An owner reference the pod must have: its kind, and a name pattern. `Deployment` also
   * matches the pods of the Deployment's ReplicaSets (`<name>-<pod-template-hash>`).
   */
  readonly owner?: { readonly kind: string; readonly name: string };
  /** An image pattern: the pod matches when one of its containers' images does. */
  readonly image?: string;
  /** Node name patterns; any one may match. */
  readonly nodes?: readonly string[];
  /** Labels the node must carry (a fleet template's labels, or `run`'s own node labels). */
  readonly nodeLabels?: Readonly<Record<string, string>>;
}

/** A container that exits by itself some time after each start. */
export interface ExitBehaviour {
  readonly kind: 'exit';
  readonly exitCode: number;
  readonly afterMs: number;
  /** Which regular containers (name pattern); every one by default. */
  readonly container?: string;
}

/** A container killed by the kernel's OOM killer: exit code 137, reason OOMKilled. */
export interface OOMKillBehaviour {
  readonly kind: 'oomKill';
  readonly afterMs: number;
  readonly container?: string;
}

/** Every pull of the container's image fails: ErrImagePull, then ImagePullBackOff. */
export interface ImagePullFailureBehaviour {
  readonly kind: 'imagePullFailure';
  /** The runtime's error text, as the kubelet shows it in the waiting message. */
  readonly message: string;
  readonly container?: string;
}

/** The sandbox takes this much longer to come up: the pod stays Pending (ContainerCreating). */
export interface StartDelayBehaviour {
  readonly kind: 'startDelay';
  readonly delayMs: number;
}

/**
 * The readiness probe fails: from the start (no `periodMs`), or flapping: ready for
 * `periodMs`, unready for `periodMs`, and so on.
 */
export interface ReadinessBehaviour {
  readonly kind: 'readiness';
  readonly periodMs?: number;
  /** The probe's failure output, in the `Unhealthy` Event. */
  readonly message: string;
  readonly container?: string;
}

/** The containers ignore SIGTERM: a stop takes the whole grace period and ends in a kill. */
export interface SlowStopBehaviour {
  readonly kind: 'slowStop';
}

export type PodBehaviour = ExitBehaviour | OOMKillBehaviour | ImagePullFailureBehaviour | StartDelayBehaviour | ReadinessBehaviour | SlowStopBehaviour;

export const NODE_CONDITIONS = Object.freeze(['NotReady', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const);
export type NodeConditionChange = (typeof NODE_CONDITIONS)[number];

/** The node reports a condition gone bad from `fromMs` after its start, until `untilMs` (or for good). */
export interface NodeConditionBehaviour {
  readonly kind: 'nodeCondition';
  readonly condition: NodeConditionChange;
  readonly fromMs: number;
  readonly untilMs?: number;
}

export type Behaviour = PodBehaviour | NodeConditionBehaviour;

export interface Scenario {
  /** Its name, or `scenarios[<index>]`: what seeds its fraction. */
  readonly name: string;
  readonly match: ScenarioMatch;
  /** The share of the matching pods (or nodes) it applies to, in [0, 1]. */
  readonly fraction: number;
  readonly behaviour: Behaviour;
}

/** The behaviours' keys in a scenario, as the file spells them. */
export const BEHAVIOUR_KEYS = Object.freeze(['exit', 'oomKill', 'imagePullFailure', 'startDelay', 'readiness', 'slowStop', 'nodeCondition'] as const);
