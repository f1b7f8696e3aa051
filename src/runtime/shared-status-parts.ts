import type { V1Container, V1ContainerState, V1PodCondition, V1PodIP } from '@kubernetes/client-node';

/**
 * Parts of the statuses the simulated runtime renders that many pods have equal, held once for
 * the process: the times (whole seconds), the conditions, a running container's state, the
 * host's address list, and a container's resources. The status writer keeps
 * the last status of every pod, and in a fleet those are thousands of statuses made of the
 * same few values (docs/performance.md, "The fleet's cost per pod").
 *
 * Every part handed out is frozen (a Date cannot be, and nothing sets one), since any number of
 * statuses hold it. The tables are bounded and forgotten wholesale when full: a part given out
 * before stays valid, it is only no longer handed out again.
 */

const TABLE_MAX = 4096;

function bounded<K, V>(): { get(key: K, make: () => V): V } {
  const table = new Map<K, V>();
  return {
    get(key, make) {
      const held = table.get(key);
      if (held !== undefined) return held;
      if (table.size >= TABLE_MAX) table.clear();
      const value = make();
      table.set(key, value);
      return value;
    },
  };
}

const dates = bounded<number, Date>();
const conditions = bounded<string, V1PodCondition>();
const runningStates = bounded<number, V1ContainerState>();
const hostAddresses = bounded<string, V1PodIP[]>();

/** The Date of `ms` rounded down to its second. */
export function secondOf(ms: number): Date {
  const whole = Math.floor(ms / 1000) * 1000;
  return dates.get(whole, () => new Date(whole));
}

export function sharedCondition(type: string, status: string, at: Date, reason?: string, message?: string): V1PodCondition {
  // Undefined and '' differ (a field left out, or empty): the key tells them apart.
  const key = `${type}\u0000${status}\u0000${at.getTime()}\u0000${reason ?? '\u0001'}\u0000${message ?? '\u0001'}`;
  return conditions.get(key, () => {
    const c: V1PodCondition = { type, status, lastTransitionTime: at };
    if (reason !== undefined) c.reason = reason;
    if (message !== undefined) c.message = message;
    return Object.freeze(c);
  });
}

/** `{ running: { startedAt } }` for a start at `at` (whole seconds). */
export function runningState(at: Date): V1ContainerState {
  return runningStates.get(at.getTime(), () => Object.freeze({ running: Object.freeze({ startedAt: at }) }));
}

/** `[{ ip }]`, the node's address as every status of the node shows it. */
export function hostIPList(ip: string): V1PodIP[] {
  return hostAddresses.get(ip, () => Object.freeze([Object.freeze({ ip })]) as V1PodIP[]);
}

/**
 * `derive(container)`, frozen deeply, equal values held once (by their JSON, in a bounded table):
 * pods of one template give their containers equal resources. Nothing is kept per container
 * spec: the writer lets go of a status once written, and a part held for each pod's spec
 * outlived the statuses it was made for (docs/performance.md, "The fleet's cost per pod").
 */
export function sharedByContent<T extends object>(derive: (c: V1Container) => T): (c: V1Container) => T {
  const table = bounded<string, T>();
  return (c) => {
    const value = derive(c);
    return table.get(JSON.stringify(value), () => deepFreeze(value));
  };
}

/**
 * `derive(container)`, frozen deeply, made at each call: for parts that differ from pod to pod
 * (a service account's mount is named after its pod), which a table would only hold longer.
 */
export function madeEachTime<T extends object>(derive: (c: V1Container) => T): (c: V1Container) => T {
  return (c) => deepFreeze(derive(c));
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const part of Object.values(value)) deepFreeze(part);
  return Object.freeze(value);
}
