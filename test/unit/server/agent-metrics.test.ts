// The agent's metrics are plain values shown through views (src/server/agent-metrics.ts,
// node-metrics-view.ts). What a scrape shows must be what prom-client's own Gauge, Counter and
// Histogram showed for the same calls, for one node and for a fleet's nodes labelled by node:
// the reference below is prom-client's metrics, defined as the agent defined them before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { hasErrorCode } from '../../../src/errors.js';
import { MANAGED_EPHEMERAL_CONTAINERS, MANAGED_EPHEMERAL_CONTAINERS_HELP, registerEphemeralContainersGauge } from '../../../src/pod/metrics.js';
import { AGENT_METRIC_HELP, createAgentMetrics, type AgentMetrics } from '../../../src/server/agent-metrics.js';
import { showNodeMetrics } from '../../../src/server/node-metrics-view.js';

/** prom-client's metrics as the agent registered them, driven through the same calls. */
function referenceMetrics(registry: Registry, ephemeral: () => number): Omit<AgentMetrics, 'series'> {
  const registers = [registry];
  const def = (name: keyof typeof AGENT_METRIC_HELP) => ({ name, help: AGENT_METRIC_HELP[name].help, registers });
  const mirrorPods = new Gauge(def('kubelet_mirror_pods'));
  const desired = new Gauge({ ...def('kubelet_desired_pods'), labelNames: ['static'] });
  const mirrorOps = new Counter({ ...def('kubelet_pods_mirror_operations_total'), labelNames: ['operation', 'result'] });
  const sync = new Histogram({ ...def('kubelet_pods_sync_duration_seconds'), buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10] });
  const sourceErrors = new Counter({ ...def('kubelet_pods_source_errors_total'), labelNames: ['source'] });
  const statusWrites = new Counter({ ...def('kubelet_pods_status_writes_total'), labelNames: ['result'] });
  const active = new Gauge({ ...def('kubelet_active_pods'), labelNames: ['static'] });
  const working = new Gauge({ ...def('kubelet_working_pods'), labelNames: ['lifecycle', 'config', 'static'] });
  const restarted = new Counter({ ...def('kubelet_restarted_pods_total'), labelNames: ['static'] });
  const events = new Counter({ ...def('kubelet_pods_events_total'), labelNames: ['result'] });
  // The gauge as the pod manager registered it with prom-client before it became a view.
  new Gauge({
    name: MANAGED_EPHEMERAL_CONTAINERS,
    help: MANAGED_EPHEMERAL_CONTAINERS_HELP,
    registers: [registry],
    collect() {
      this.set(ephemeral());
    },
  });
  const byStatic = (g: Gauge<'static'>) => (c: { static: number; nonStatic: number }) => {
    g.set({ static: 'true' }, c.static);
    g.set({ static: '' }, c.nonStatic);
  };
  return {
    setMirrorPods: (n) => mirrorPods.set(n),
    setDesiredPods: byStatic(desired),
    setActivePods: byStatic(active),
    recordMirrorOperation: (operation, result) => mirrorOps.inc({ operation, result }),
    observeSyncDuration: (s) => sync.observe(s),
    recordSourceError: (source) => sourceErrors.inc({ source }),
    recordStatusWrite: (result) => statusWrites.inc({ result }),
    setWorkingPods: (counts) => {
      for (const lifecycle of ['sync', 'terminating', 'terminated'])
        for (const config of ['desired', 'orphan'])
          for (const isStatic of ['true', '']) working.set({ lifecycle, config, static: isStatic }, counts.get(`${lifecycle}|${config}|${isStatic}`) ?? 0);
    },
    recordRestartedPod: (isStatic) => restarted.inc({ static: isStatic ? 'true' : '' }),
    recordEvent: (result) => events.inc({ result }),
  };
}

/** A node's life in calls: every setter and recorder, some twice, some with values past the buckets. */
function drive(m: Omit<AgentMetrics, 'series'>, seed: number): void {
  m.setWorkingPods(new Map([['sync|desired|', 2 + seed], ['terminating|orphan|true', 1]]));
  m.setDesiredPods({ static: 1, nonStatic: seed });
  m.recordEvent('created');
  m.recordMirrorOperation('create', 'error');
  m.observeSyncDuration(0.003);
  m.recordMirrorOperation('create', 'success');
  m.recordMirrorOperation('create', 'success');
  m.observeSyncDuration(42);
  m.observeSyncDuration(0.5);
  m.recordSourceError('http');
  m.recordSourceError('file|odd');
  m.recordStatusWrite('success');
  m.setActivePods({ static: 0, nonStatic: 3 });
  m.setMirrorPods(seed);
  m.recordRestartedPod(false);
  m.recordRestartedPod(true);
  m.recordRestartedPod(false);
  m.recordEvent('patched');
  m.setWorkingPods(new Map([['sync|desired|true', 4]]));
}

describe('the agent metrics, shown as prom-client showed them', () => {
  it('one node, untouched and after every kind of call, with and without a default label', async () => {
    for (const defaultLabels of [undefined, { node: 'n1' }]) {
      const reference = new Registry();
      const ours = new Registry();
      if (defaultLabels) {
        reference.setDefaultLabels(defaultLabels);
        ours.setDefaultLabels(defaultLabels);
      }
      const ref = referenceMetrics(reference, () => 2);
      const metrics = createAgentMetrics();
      showNodeMetrics(ours, () => [{ labels: {}, metrics, podManager: { managedEphemeralContainers: 2 } }]);
      assert.equal(await ours.metrics(), await reference.metrics(), 'untouched');
      drive(ref, 1);
      drive(metrics, 1);
      assert.equal(await ours.metrics(), await reference.metrics(), 'after the calls');
      assert.match(await ours.metrics(), /^kubelet_pods_mirror_operations_total\{operation="create",result="success"(,node="n1")?\} 2$/m);
    }
  });

  it("a fleet's nodes in one view, labelled by node, as the aggregate of one registry per node was", async () => {
    const perNode = ['a', 'b', 'c'].map((node, i) => {
      const registry = new Registry();
      registry.setDefaultLabels({ node });
      const ref = referenceMetrics(registry, () => i);
      if (i !== 1) drive(ref, i);
      return registry;
    });
    const nodes = ['a', 'b', 'c'].map((node, i) => {
      const metrics = createAgentMetrics();
      if (i !== 1) drive(metrics, i);
      return { labels: { node }, metrics, podManager: { managedEphemeralContainers: i } };
    });
    const view = showNodeMetrics(new Registry(), () => nodes);
    const aggregate = async (registries: Registry[]) => {
      const all = await Promise.all(registries.map((r) => r.getMetricsAsJSON()));
      return AggregatorRegistry.aggregate(all as unknown as MetricObjectWithValues<MetricValue<string>>[][]).metrics();
    };
    const ours = await aggregate([view]);
    assert.equal(ours, await aggregate(perNode));
    assert.match(ours, /^kubelet_working_pods\{lifecycle="sync",config="desired",static="true",node="c"\} 4$/m);
  });

  it("the pod manager's kubelet_managed_ephemeral_containers shows what prom-client's Gauge showed, and refuses a taken name", async () => {
    for (const defaultLabels of [undefined, { node: 'n1' }]) {
      let count = 0;
      const reference = new Registry();
      const ours = new Registry();
      if (defaultLabels) {
        reference.setDefaultLabels(defaultLabels);
        ours.setDefaultLabels(defaultLabels);
      }
      new Gauge({ name: MANAGED_EPHEMERAL_CONTAINERS, help: MANAGED_EPHEMERAL_CONTAINERS_HELP, registers: [reference], collect() { this.set(count); } });
      registerEphemeralContainersGauge(ours, () => count);
      for (const n of [0, 3, 1]) {
        count = n;
        assert.equal(await ours.metrics(), await reference.metrics());
        assert.deepEqual(await ours.getMetricsAsJSON(), await reference.getMetricsAsJSON());
      }
      assert.throws(() => registerEphemeralContainersGauge(ours, () => 0), (err: unknown) => hasErrorCode(err, 'KP_ERR_METRIC_REGISTERED'));
    }
  });

  it('refuses a registry that already holds its metrics', () => {
    const registry = new Registry();
    createAgentMetrics(registry);
    assert.throws(() => createAgentMetrics(registry), (err: unknown) => hasErrorCode(err, 'KP_ERR_METRIC_REGISTERED'));
    const view = new Registry();
    showNodeMetrics(view, () => []);
    assert.throws(() => showNodeMetrics(view, () => []), (err: unknown) => hasErrorCode(err, 'KP_ERR_METRIC_REGISTERED'));
  });
});
