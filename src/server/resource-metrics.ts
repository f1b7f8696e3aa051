import type { NodeUsage } from '../status/node-usage.js';
import { send, type Route } from './server.js';
import { statsSummary, type StatsSummary } from './stats-summary.js';

/**
 * `/metrics/resource`: the kubelet's resource metrics collector
 * (pkg/kubelet/metrics/collectors/resource_metrics.go, v1.34) over the node's Summary, written
 * as its Prometheus handler writes them: families sorted by name, each series with the time of
 * its sample in milliseconds, labels in name order, series in label order, numbers as Go's
 * strconv 'g' format prints them, HELP text with the stability level component-base adds.
 * `scrape_error` (deprecated in 1.29) is hidden by the kubelet since 1.30 and left out;
 * swap is not simulated, so its families have no series and are not written.
 */

/** The content type of the kubelet's answer to a scrape that asks for nothing in particular. */
export const RESOURCE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores';

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';
}

const family = (name: string, help: string, type: 'counter' | 'gauge', level: 'STABLE' | 'ALPHA' = 'STABLE'): Family => ({ name, help: `[${level}] ${help}`, type });

const NODE_CPU = family('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds', 'counter');
const NODE_MEMORY = family('node_memory_working_set_bytes', 'Current working set of the node in bytes', 'gauge');
const CONTAINER_CPU = family('container_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the container in core-seconds', 'counter');
const CONTAINER_MEMORY = family('container_memory_working_set_bytes', 'Current working set of the container in bytes', 'gauge');
const CONTAINER_START = family('container_start_time_seconds', 'Start time of the container since unix epoch in seconds', 'gauge');
const POD_CPU = family('pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', 'counter');
const POD_MEMORY = family('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', 'gauge');
const SCRAPE_ERROR = family('resource_scrape_error', '1 if there was an error while getting container metrics, 0 otherwise', 'gauge');

interface Sample {
  /** Label names and values, in label-name order. */
  readonly labels: ReadonlyArray<readonly [string, string]>;
  readonly value: number;
  /** Milliseconds since the epoch; none for a sample without a time. */
  readonly timestampMs?: number;
}

/** The collector's series for one Summary, in the text exposition format. */
export function resourceMetricsText(summary: StatsSummary): string {
  const samples = new Map<Family, Sample[]>();
  const add = (f: Family, sample: Sample): void => {
    const list = samples.get(f);
    if (list === undefined) samples.set(f, [sample]);
    else list.push(sample);
  };
  const { node } = summary;
  add(NODE_CPU, { labels: [], value: node.cpu.usageCoreNanoSeconds / 1e9, timestampMs: node.cpu.time.getTime() });
  add(NODE_MEMORY, { labels: [], value: node.memory.workingSetBytes, timestampMs: node.memory.time.getTime() });
  for (const pod of summary.pods) {
    const podLabels = [['namespace', pod.podRef.namespace], ['pod', pod.podRef.name]] as const;
    for (const c of pod.containers) {
      const labels = [['container', c.name], ...podLabels] as const;
      if (c.startTime.getTime() >= 1000) add(CONTAINER_START, { labels, value: c.startTime.getTime() / 1000 });
      add(CONTAINER_CPU, { labels, value: c.cpu.usageCoreNanoSeconds / 1e9, timestampMs: c.cpu.time.getTime() });
      add(CONTAINER_MEMORY, { labels, value: c.memory.workingSetBytes, timestampMs: c.memory.time.getTime() });
    }
    add(POD_CPU, { labels: podLabels, value: pod.cpu.usageCoreNanoSeconds / 1e9, timestampMs: pod.cpu.time.getTime() });
    add(POD_MEMORY, { labels: podLabels, value: pod.memory.workingSetBytes, timestampMs: pod.memory.time.getTime() });
  }
  add(SCRAPE_ERROR, { labels: [], value: 0 });

  let text = '';
  for (const f of [...samples.keys()].sort((a, b) => compare(a.name, b.name))) {
    text += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of samples.get(f)!.sort(byLabels)) {
      const labels = s.labels.length === 0 ? '' : `{${s.labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
      text += `${f.name}${labels} ${goFloat(s.value)}${s.timestampMs !== undefined ? ` ${Math.floor(s.timestampMs)}` : ''}\n`;
    }
  }
  return text;
}

/** `/metrics/resource` → the node's resource metrics. */
export function resourceMetricsRoute(options: { nodeName: string; usage: () => NodeUsage }): Route {
  return {
    path: '/metrics/resource',
    handle: (_req, res) => {
      const usage = options.usage();
      // client_golang's handler tells when its process started, in Unix seconds.
      res.setHeader('Process-Start-Time-Unix', String(Math.floor(usage.startTime.getTime() / 1000)));
      send(res, 200, RESOURCE_METRICS_CONTENT_TYPE, resourceMetricsText(statsSummary(options.nodeName, usage)));
    },
  };
}

/**
 * A float64 as Go's strconv.FormatFloat(f, 'g', -1, 64) prints it (Prometheus' text format):
 * the shortest digits that read back, in exponent form when the exponent is below -4 or at
 * least 6 (`1.234567e+06`), else plain.
 */
export function goFloat(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  if (f === 0) return '0';
  const [mantissa, exp] = f.toExponential().split('e') as [string, string];
  const exponent = Number(exp);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  return String(f);
}

function byLabels(a: Sample, b: Sample): number {
  for (let i = 0; i < a.labels.length; i++) {
    const c = compare(a.labels[i]![1], b.labels[i]![1]);
    if (c !== 0) return c;
  }
  return 0;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function escapeHelp(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabel(s: string): string {
  // Names and namespaces almost never need it: test before rewriting.
  return /[\\\n"]/.test(s) ? s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : s;
}
