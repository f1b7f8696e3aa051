// The fleet-scale benchmark's measurements of one window, taken from outside a run that is still
// going (one that will not reach its next phase in the time there is):
//
//   node build/bench/agent/fleet-scale-probe.js <cluster dir> <fleet pid> <control plane pid> [window ms] [node prefix]
//
// prints as JSON the Lease lateness over the window (a watch opened one renewal period before
// it), CPU and RSS of the fleet and the control plane's processes, and the API server's account
// (bench/agent/api-server-metrics.ts), as fleet-scale.bench.ts reports them per phase.
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { apiServerPhase, readApiServerMetrics } from './api-server-metrics.js';
import { leaseLateness, quantile, watchLeaseRenewals } from './fleet.bench.js';
import { controlPlaneProcesses, PhaseUsage } from './process-usage.js';

const [dir, fleetPid, controlPlanePid, windowArg, prefix = 'fs-'] = process.argv.slice(2);
if (dir === undefined || fleetPid === undefined || controlPlanePid === undefined) {
  console.error('usage: fleet-scale-probe <cluster dir> <fleet pid> <control plane pid> [window ms] [node prefix]');
  process.exit(2);
}
const adminKubeconfig = join(dir, 'admin.kubeconfig');
const kc = new KubeConfig();
kc.loadFromFile(adminKubeconfig);
const server = kc.getCurrentCluster()?.server ?? '';
const metrics = (): ReturnType<typeof readApiServerMetrics> => readApiServerMetrics(server, adminKubeconfig, join(dir, 'pki', 'ca.crt'));

const leases = await watchLeaseRenewals(kc, prefix);
// A lateness is a gap since the previous renewal: let every Lease be seen once first.
await delay(12_000);
const m0 = await metrics();
const usage = new PhaseUsage([{ name: 'kubelet-pods fleet', pid: Number(fleetPid) }, ...controlPlaneProcesses(Number(controlPlanePid))]);
const t0 = performance.now();
await delay(Number(windowArg ?? 60_000));
const t1 = performance.now();
const processes = usage.end();
const apiServer = apiServerPhase(m0, await metrics());
const late = leaseLateness(leases.renewals, t0, t1);
leases.stop();
const lease = { renewals: late.length, p50Ms: quantile(late, 0.5), p99Ms: quantile(late, 0.99), maxMs: late.at(-1) ?? 0 };
console.log(JSON.stringify({ windowMs: Math.round(t1 - t0), lease, leaseWatchReopened: leases.reopened(), processes, apiServer }, null, 1));
process.exit(0);
