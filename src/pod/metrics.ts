import type { Registry } from 'prom-client';
import { kpError } from '../errors.js';
import type { Pod } from './types.js';

export const MANAGED_EPHEMERAL_CONTAINERS = 'kubelet_managed_ephemeral_containers';
export const MANAGED_EPHEMERAL_CONTAINERS_HELP = 'Current number of ephemeral containers in pods managed by this kubelet.';

export function countEphemeralContainers(pod: Pod | undefined): number {
  return pod?.spec?.ephemeralContainers?.length ?? 0;
}

/** What a scrape of the gauge reads: prom-client's shape of a metric's values. */
export interface EphemeralContainersGauge {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge';
  readonly aggregator: 'sum';
  get(): { name: string; help: string; type: 'gauge'; aggregator: 'sum'; values: { value: number; labels: Record<string, never> }[] };
  reset(): void;
}

/**
 * Registers the kubelet's `kubelet_managed_ephemeral_containers` gauge. Its value is read from
 * `current()` at scrape time, so keeping it exact costs the pod manager one integer update per
 * call and nothing per scrape beyond the read. A view in prom-client's metric shape, as the
 * agent's metrics are (src/server/node-metrics-view.ts), not a prom-client Gauge: the pod
 * manager then never loads prom-client, which only the registry it is given needs.
 */
export function registerEphemeralContainersGauge(registry: Registry, current: () => number): EphemeralContainersGauge {
  if (registry.getSingleMetric(MANAGED_EPHEMERAL_CONTAINERS)) {
    throw kpError('KP_ERR_METRIC_REGISTERED', [MANAGED_EPHEMERAL_CONTAINERS]);
  }
  const name = MANAGED_EPHEMERAL_CONTAINERS;
  const help = MANAGED_EPHEMERAL_CONTAINERS_HELP;
  const gauge: EphemeralContainersGauge = {
    name,
    help,
    type: 'gauge',
    aggregator: 'sum',
    get: () => ({ name, help, type: 'gauge', aggregator: 'sum', values: [{ value: current(), labels: {} }] }),
    reset: () => undefined,
  };
  registry.registerMetric(gauge as never);
  return gauge;
}
