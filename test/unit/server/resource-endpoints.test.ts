// /stats/summary and /metrics/resource as the kubelet writes them: the Summary's JSON shape
// (k8s.io/kubelet/pkg/apis/stats/v1alpha1, go-restful's indentation, metav1.Time in seconds) and
// the resource metrics collector's text (pkg/kubelet/metrics/collectors/resource_metrics.go,
// component-base's HELP annotations, client_golang's ordering, Go's float format).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goFloat, RESOURCE_METRICS_CONTENT_TYPE, resourceMetricsRoute, resourceMetricsText } from '../../../src/server/resource-metrics.js';
import { createAgentServer } from '../../../src/server/server.js';
import { statsSummary, statsSummaryJSON, statsSummaryRoute } from '../../../src/server/stats-summary.js';
import type { NodeUsage } from '../../../src/status/node-usage.js';

const MI = 2 ** 20;
const at = (iso: string) => new Date(iso);

const USAGE: NodeUsage = {
  time: at('2026-01-01T00:01:00.250Z'),
  startTime: at('2026-01-01T00:00:00Z'),
  memoryCapacityBytes: 4096 * MI,
  cpuCoreNanoSeconds: 21_000_000_000,
  cpuNanoCores: 300_000_000,
  workingSetBytes: 256 * MI + 48 * MI,
  system: { cpuCoreNanoSeconds: 3_000_000_000, cpuNanoCores: 50_000_000, workingSetBytes: 256 * MI },
  podsTotal: { cpuCoreNanoSeconds: 18_000_000_000, cpuNanoCores: 250_000_000, workingSetBytes: 48 * MI },
  pods: [
    {
      name: 'web-node-a',
      namespace: 'default',
      uid: 'u-web',
      startTime: at('2026-01-01T00:00:10Z'),
      cpuCoreNanoSeconds: 12_000_000_000,
      cpuNanoCores: 200_000_000,
      workingSetBytes: 32 * MI,
      memoryLimitBytes: 64 * MI,
      containers: [
        { name: 'main', startTime: at('2026-01-01T00:00:12Z'), cpuCoreNanoSeconds: 12_000_000_000, cpuNanoCores: 200_000_000, workingSetBytes: 32 * MI, memoryLimitBytes: 64 * MI },
      ],
    },
    {
      name: 'a-pod',
      namespace: 'kube-system',
      uid: 'u-a',
      startTime: at('2026-01-01T00:00:30Z'),
      cpuCoreNanoSeconds: 6_000_000_000,
      cpuNanoCores: 50_000_000,
      workingSetBytes: 16 * MI,
      containers: [{ name: 'app', startTime: at('2026-01-01T00:00:30Z'), cpuCoreNanoSeconds: 6_000_000_000, cpuNanoCores: 50_000_000, workingSetBytes: 16 * MI }],
    },
  ],
};

const T = String(Date.parse('2026-01-01T00:01:00.250Z'));

describe('/metrics/resource', () => {
  it('is the collector text: families by name, [STABLE] help, labels by name, series by labels, Go floats, sample times in ms', () => {
    assert.equal(
      resourceMetricsText(statsSummary('node-a', USAGE)),
      [
        '# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds',
        '# TYPE container_cpu_usage_seconds_total counter',
        `container_cpu_usage_seconds_total{container="app",namespace="kube-system",pod="a-pod"} 6 ${T}`,
        `container_cpu_usage_seconds_total{container="main",namespace="default",pod="web-node-a"} 12 ${T}`,
        '# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes',
        '# TYPE container_memory_working_set_bytes gauge',
        `container_memory_working_set_bytes{container="app",namespace="kube-system",pod="a-pod"} 1.6777216e+07 ${T}`,
        `container_memory_working_set_bytes{container="main",namespace="default",pod="web-node-a"} 3.3554432e+07 ${T}`,
        '# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds',
        '# TYPE container_start_time_seconds gauge',
        'container_start_time_seconds{container="app",namespace="kube-system",pod="a-pod"} 1.76722563e+09',
        'container_start_time_seconds{container="main",namespace="default",pod="web-node-a"} 1.767225612e+09',
        '# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds',
        '# TYPE node_cpu_usage_seconds_total counter',
        `node_cpu_usage_seconds_total 21 ${T}`,
        '# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes',
        '# TYPE node_memory_working_set_bytes gauge',
        `node_memory_working_set_bytes 3.18767104e+08 ${T}`,
        '# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds',
        '# TYPE pod_cpu_usage_seconds_total counter',
        `pod_cpu_usage_seconds_total{namespace="default",pod="web-node-a"} 12 ${T}`,
        `pod_cpu_usage_seconds_total{namespace="kube-system",pod="a-pod"} 6 ${T}`,
        '# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes',
        '# TYPE pod_memory_working_set_bytes gauge',
        `pod_memory_working_set_bytes{namespace="default",pod="web-node-a"} 3.3554432e+07 ${T}`,
        `pod_memory_working_set_bytes{namespace="kube-system",pod="a-pod"} 1.6777216e+07 ${T}`,
        '# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise',
        '# TYPE resource_scrape_error gauge',
        'resource_scrape_error 0',
        '',
      ].join('\n'),
    );
  });

  it('a node without running pods has only the node series and the scrape error', () => {
    const text = resourceMetricsText(statsSummary('node-a', { ...USAGE, pods: [] }));
    assert.deepEqual(
      text.split('\n').filter((l) => !l.startsWith('#')),
      [`node_cpu_usage_seconds_total 21 ${T}`, `node_memory_working_set_bytes 3.18767104e+08 ${T}`, 'resource_scrape_error 0', ''],
    );
  });

  it('escapes label values as the text format asks', () => {
    const odd = { ...USAGE, pods: [{ ...USAGE.pods[1]!, name: 'a"b\\c\nd' }] };
    assert.match(resourceMetricsText(statsSummary('n', odd)), /^pod_cpu_usage_seconds_total\{namespace="kube-system",pod="a\\"b\\\\c\\nd"\} 6 /m);
  });

  it('prints numbers as Go strconv.FormatFloat(f, \'g\', -1, 64) does', () => {
    // Each pair printed by Go 1.24.
    const cases: Array<[number, string]> = [
      [1234567, '1.234567e+06'], [0.5, '0.5'], [1e-5, '1e-05'], [123456, '123456'], [12.345, '12.345'], [1.7e9, '1.7e+09'],
      [0.0001, '0.0001'], [268435456, '2.68435456e+08'], [1.7641548e9, '1.7641548e+09'], [0.00012345, '0.00012345'], [100, '100'],
      [1e21, '1e+21'], [5.25e-7, '5.25e-07'], [3.0000001, '3.0000001'], [0, '0'], [1, '1'],
    ];
    for (const [f, go] of cases) assert.equal(goFloat(f), go, String(f));
  });
});

describe('/stats/summary', () => {
  it('is the v1alpha1 Summary: fields in the Go types\' order, times in whole seconds, one-space indentation', () => {
    const json = statsSummaryJSON(statsSummary('node-a', USAGE));
    assert.ok(json.startsWith('{\n "node": {\n  "nodeName": "node-a",\n  "systemContainers": [\n   {\n    "name": "kubelet",'), json.slice(0, 120));
    assert.ok(!json.endsWith('\n'), 'no newline at the end, as go-restful writes it');
    const time = '2026-01-01T00:01:00Z';
    const cpu = (nanoCores: number, coreNanoSeconds: number) => ({ time, usageNanoCores: nanoCores, usageCoreNanoSeconds: coreNanoSeconds });
    const memory = (ws: number, available?: number) => ({
      time,
      ...(available !== undefined ? { availableBytes: available } : {}),
      usageBytes: ws,
      workingSetBytes: ws,
      rssBytes: ws,
      pageFaults: 0,
      majorPageFaults: 0,
    });
    const expected = {
      node: {
        nodeName: 'node-a',
        systemContainers: [
          { name: 'kubelet', startTime: '2026-01-01T00:00:00Z', cpu: cpu(50_000_000, 3e9), memory: memory(256 * MI) },
          { name: 'pods', startTime: '2026-01-01T00:00:00Z', cpu: cpu(250_000_000, 18e9), memory: memory(48 * MI, 4048 * MI) },
        ],
        startTime: '2026-01-01T00:00:00Z',
        cpu: cpu(300_000_000, 21e9),
        memory: memory(304 * MI, 3792 * MI),
      },
      pods: [
        {
          podRef: { name: 'web-node-a', namespace: 'default', uid: 'u-web' },
          startTime: '2026-01-01T00:00:10Z',
          containers: [{ name: 'main', startTime: '2026-01-01T00:00:12Z', cpu: cpu(200_000_000, 12e9), memory: memory(32 * MI, 32 * MI) }],
          cpu: cpu(200_000_000, 12e9),
          memory: memory(32 * MI, 32 * MI),
        },
        {
          podRef: { name: 'a-pod', namespace: 'kube-system', uid: 'u-a' },
          startTime: '2026-01-01T00:00:30Z',
          containers: [{ name: 'app', startTime: '2026-01-01T00:00:30Z', cpu: cpu(50_000_000, 6e9), memory: memory(16 * MI) }],
          cpu: cpu(50_000_000, 6e9),
          memory: memory(16 * MI),
        },
      ],
    };
    // Same text as the expected object in that key order: order and values both checked.
    assert.equal(json, JSON.stringify(expected, null, 1));
  });

  it('a node without pods has an empty list, not null', () => {
    assert.deepEqual((JSON.parse(statsSummaryJSON(statsSummary('n', { ...USAGE, pods: [] }))) as { pods: unknown }).pods, []);
  });
});

describe('the routes', () => {
  it('serve the text and the JSON with the kubelet\'s content types, each scrape measuring anew', async () => {
    let scrapes = 0;
    const usage = () => {
      scrapes++;
      return USAGE;
    };
    const server = createAgentServer({ routes: [resourceMetricsRoute({ nodeName: 'node-a', usage }), statsSummaryRoute({ nodeName: 'node-a', usage })] });
    const { port } = await server.listen();
    try {
      const metrics = await fetch(`http://127.0.0.1:${port}/metrics/resource`);
      assert.equal(metrics.status, 200);
      assert.equal(metrics.headers.get('content-type'), RESOURCE_METRICS_CONTENT_TYPE);
      assert.equal(metrics.headers.get('process-start-time-unix'), String(Date.parse('2026-01-01T00:00:00Z') / 1000));
      assert.equal(await metrics.text(), resourceMetricsText(statsSummary('node-a', USAGE)));
      const summary = await fetch(`http://127.0.0.1:${port}/stats/summary?only_cpu_and_memory=true`);
      assert.equal(summary.status, 200);
      assert.equal(summary.headers.get('content-type'), 'application/json');
      assert.equal(await summary.text(), statsSummaryJSON(statsSummary('node-a', USAGE)));
      assert.equal(scrapes, 2);
    } finally {
      await server.close();
    }
  });
});
