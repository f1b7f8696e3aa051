import { Gauge, type Registry } from 'prom-client';
import { kpError } from '../errors.js';
import type { Pod } from './types.js';

export const MANAGED_EPHEMERAL_CONTAINERS = 'kubelet_managed_ephemeral_containers';
export const MANAGED_EPHEMERAL_CONTAINERS_HELP = 'Current number of ephemeral containers in pods managed by this kubelet.';

export function countEphemeralContainers(pod: Pod | undefined): number {
  return pod?.spec?.ephemeralContainers?.length ?? 0;
}

/**
 * Registers the kubelet's `kubelet_managed_ephemeral_containers` gauge. Its value is read from
 * `current()` at scrape time, so keeping it exact costs the pod manager one integer update per
 * call and nothing per scrape beyond the read.
 */
export function registerEphemeralContainersGauge(registry: Registry, current: () => number): Gauge {
  if (registry.getSingleMetric(MANAGED_EPHEMERAL_CONTAINERS)) {
    throw kpError('KP_ERR_METRIC_REGISTERED', [MANAGED_EPHEMERAL_CONTAINERS]);
  }
  return new Gauge({
    name: MANAGED_EPHEMERAL_CONTAINERS,
    help: MANAGED_EPHEMERAL_CONTAINERS_HELP,
    registers: [registry],
    collect() {
      this.set(current());
    },
  });
}
