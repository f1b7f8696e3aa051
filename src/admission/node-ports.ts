import type { Pod } from '../pod/types.js';

/**
 * Host ports, as the scheduler's NodePorts filter (which the kubelet's admission runs) sees
 * them: a port a pod holds on the node for as long as it runs.
 */
export interface HostPortUse {
  /** The host IP it binds; '0.0.0.0' (every address) when the spec leaves it empty. */
  readonly ip: string;
  /** TCP unless the spec says otherwise. */
  readonly protocol: string;
  readonly port: number;
}

const ALL_ADDRESSES = '0.0.0.0';

/**
 * The host ports of `pod`: every `hostPort` of its containers and sidecars (init containers
 * with restartPolicy Always; the others exit before the pod runs, so they hold nothing). On
 * the host network, the API defaults each `hostPort` to its `containerPort`; a static pod's
 * manifest is compared here as that defaulting would leave it, so `hostPort` 0 counts as the
 * container port there.
 */
export function hostPortsOf(pod: Pod): HostPortUse[] {
  const hostNetwork = pod.spec?.hostNetwork === true;
  const containers = [...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always'), ...(pod.spec?.containers ?? [])];
  const out: HostPortUse[] = [];
  for (const c of containers) {
    for (const p of c.ports ?? []) {
      const port = p.hostPort !== undefined && p.hostPort > 0 ? p.hostPort : hostNetwork ? p.containerPort : 0;
      if (!(port > 0)) continue;
      out.push({ ip: p.hostIP === undefined || p.hostIP === '' ? ALL_ADDRESSES : p.hostIP, protocol: p.protocol === undefined || p.protocol === '' ? 'TCP' : p.protocol, port });
    }
  }
  return out;
}

/**
 * Whether `wanted` collides with a port in `used`: the same protocol and port on the same
 * address, where 0.0.0.0 on either side collides with every address. A pod's own ports are
 * not checked against each other, as in the scheduler.
 */
export function hostPortsConflict(wanted: readonly HostPortUse[], used: Iterable<HostPortUse>): boolean {
  if (wanted.length === 0) return false;
  const taken = [...used];
  return wanted.some((w) => taken.some((u) => u.port === w.port && u.protocol === w.protocol && (w.ip === ALL_ADDRESSES || u.ip === ALL_ADDRESSES || u.ip === w.ip)));
}
