// The API server's own account of a benchmark phase, from two readings of its /metrics: how many
// requests it served by verb and resource and how long they took (apiserver_request_total,
// apiserver_request_duration_seconds), how long etcd took under it (etcd_request_duration_seconds),
// and what API Priority and Fairness queued or refused per priority level. Read as admin.
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import { httpsGet } from '../../test/helpers/https-get.js';

interface Histogram {
  count: number;
  sum: number;
  /** Cumulative counts by upper bound (seconds), +Inf included. */
  buckets: Map<number, number>;
}

export interface MetricsReading {
  at: number;
  /** `VERB resource[/subresource]` → requests served. */
  requests: Map<string, number>;
  /** Requests answered 429 or 5xx, all verbs. */
  failed: number;
  latency: Map<string, Histogram>;
  /** `operation resource[.group]` → etcd's latency. */
  etcd: Map<string, Histogram>;
  /** Priority level → requests dispatched, rejected, and their time waiting in a queue. */
  dispatched: Map<string, number>;
  rejected: Map<string, number>;
  queueWait: Map<string, Histogram>;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text !== undefined) for (const m of text.matchAll(LABEL)) labels[m[1]!] = m[2]!;
  return labels;
}

function histogram(map: Map<string, Histogram>, key: string): Histogram {
  let h = map.get(key);
  if (h === undefined) map.set(key, (h = { count: 0, sum: 0, buckets: new Map() }));
  return h;
}

/** Adds one sample line of a histogram family (`_bucket`, `_sum` or `_count`) to `map` under `key`. */
function addHistogramLine(map: Map<string, Histogram>, key: string, suffix: string, labels: Record<string, string>, value: number): void {
  const h = histogram(map, key);
  if (suffix === '_count') h.count += value;
  else if (suffix === '_sum') h.sum += value;
  else if (suffix === '_bucket') {
    const le = labels['le'] === '+Inf' ? Infinity : Number(labels['le']);
    h.buckets.set(le, (h.buckets.get(le) ?? 0) + value);
  }
}

const resourceKey = (l: Record<string, string>): string => `${l['verb'] ?? '?'} ${l['resource'] || '(none)'}${l['subresource'] ? `/${l['subresource']}` : ''}`;

/** Parses the Prometheus text the API server serves into the families this file reads. */
export function parseApiServerMetrics(text: string, at = performance.now()): MetricsReading {
  const r: MetricsReading = { at, requests: new Map(), failed: 0, latency: new Map(), etcd: new Map(), dispatched: new Map(), rejected: new Map(), queueWait: new Map() };
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const [, name, rawLabels, rawValue] = m;
    const value = Number(rawValue);
    if (!Number.isFinite(value)) continue;
    const family = /^(.*?)(_bucket|_sum|_count)?$/.exec(name!)!;
    const base = family[1]!;
    const suffix = family[2] ?? '';
    switch (base) {
      case 'apiserver_request_total': {
        const l = labelsOf(rawLabels);
        r.requests.set(resourceKey(l), (r.requests.get(resourceKey(l)) ?? 0) + value);
        if (l['code'] === '429' || (l['code'] ?? '').startsWith('5')) r.failed += value;
        break;
      }
      case 'apiserver_request_duration_seconds': {
        const l = labelsOf(rawLabels);
        // Watches last as long as they are open: their "duration" says nothing about load.
        if (l['verb'] !== 'WATCH' && l['verb'] !== 'CONNECT') addHistogramLine(r.latency, resourceKey(l), suffix, l, value);
        break;
      }
      case 'etcd_request_duration_seconds': {
        const l = labelsOf(rawLabels);
        addHistogramLine(r.etcd, `${l['operation'] ?? '?'} ${l['resource'] ?? '?'}${l['group'] ? `.${l['group']}` : ''}`, suffix, l, value);
        break;
      }
      case 'apiserver_flowcontrol_dispatched_requests_total': {
        const l = labelsOf(rawLabels);
        r.dispatched.set(l['priority_level'] ?? '?', (r.dispatched.get(l['priority_level'] ?? '?') ?? 0) + value);
        break;
      }
      case 'apiserver_flowcontrol_rejected_requests_total': {
        const l = labelsOf(rawLabels);
        r.rejected.set(l['priority_level'] ?? '?', (r.rejected.get(l['priority_level'] ?? '?') ?? 0) + value);
        break;
      }
      case 'apiserver_flowcontrol_request_wait_duration_seconds': {
        const l = labelsOf(rawLabels);
        addHistogramLine(r.queueWait, l['priority_level'] ?? '?', suffix, l, value);
        break;
      }
      default:
    }
  }
  return r;
}

/** Reads the API server's /metrics with the admin kubeconfig's token, checking it with the cluster CA. */
export async function readApiServerMetrics(server: string, adminKubeconfig: string, caFile: string): Promise<MetricsReading> {
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const token = kc.getCurrentUser()?.token;
  const res = await httpsGet(`${server}/metrics`, { ca: readFileSync(caFile, 'utf8'), ...(token !== undefined ? { token } : {}) });
  if (res.status !== 200) throw new Error(`GET ${server}/metrics: HTTP ${res.status}`);
  return parseApiServerMetrics(res.body);
}

/** The q-quantile of a histogram's observations, interpolated within its bucket (as PromQL's histogram_quantile). */
export function histogramQuantile(h: Histogram, q: number): number {
  if (h.count <= 0) return 0;
  const bounds = [...h.buckets.keys()].sort((a, b) => a - b);
  const rank = q * h.count;
  let lower = 0;
  let below = 0;
  for (const upper of bounds) {
    const cumulative = h.buckets.get(upper)!;
    if (cumulative >= rank) {
      if (upper === Infinity) return lower;
      return lower + ((upper - lower) * (rank - below)) / Math.max(1e-12, cumulative - below);
    }
    lower = upper;
    below = cumulative;
  }
  return lower;
}

function histogramDelta(after: Histogram | undefined, before: Histogram | undefined): Histogram {
  const buckets = new Map<number, number>();
  for (const [le, n] of after?.buckets ?? []) buckets.set(le, n - (before?.buckets.get(le) ?? 0));
  return { count: (after?.count ?? 0) - (before?.count ?? 0), sum: (after?.sum ?? 0) - (before?.sum ?? 0), buckets };
}

export interface RateRow {
  key: string;
  perSecond: number;
  meanMs: number;
  p99Ms: number;
}

/** One phase in the API server's words: the busiest request kinds and etcd operations, and APF's view. */
export interface ApiServerPhase {
  seconds: number;
  requestsPerSecond: number;
  failed: number;
  /** The busiest request kinds (watches counted, their latency not). */
  requests: RateRow[];
  etcd: RateRow[];
  /** Per priority level with traffic: dispatched/s, rejected, mean and p99 wait in its queue. */
  priorityLevels: { level: string; perSecond: number; rejected: number; waitMeanMs: number; waitP99Ms: number }[];
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

function rows(after: Map<string, Histogram>, before: Map<string, Histogram>, seconds: number, top: number, counts?: Map<string, number>, countsBefore?: Map<string, number>): RateRow[] {
  const keys = new Set([...after.keys(), ...(counts?.keys() ?? [])]);
  const out: RateRow[] = [];
  for (const key of keys) {
    const h = histogramDelta(after.get(key), before.get(key));
    const n = counts !== undefined ? (counts.get(key) ?? 0) - (countsBefore?.get(key) ?? 0) : h.count;
    if (n <= 0) continue;
    out.push({ key, perSecond: round2(n / seconds), meanMs: h.count > 0 ? round2((h.sum / h.count) * 1000) : 0, p99Ms: round2(histogramQuantile(h, 0.99) * 1000) });
  }
  return out.sort((a, b) => b.perSecond - a.perSecond).slice(0, top);
}

export function apiServerPhase(before: MetricsReading, after: MetricsReading, top = 6): ApiServerPhase {
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  let total = 0;
  for (const [key, n] of after.requests) total += n - (before.requests.get(key) ?? 0);
  const levels = [...after.dispatched.keys()]
    .map((level) => {
      const wait = histogramDelta(after.queueWait.get(level), before.queueWait.get(level));
      return {
        level,
        perSecond: round2(((after.dispatched.get(level) ?? 0) - (before.dispatched.get(level) ?? 0)) / seconds),
        rejected: (after.rejected.get(level) ?? 0) - (before.rejected.get(level) ?? 0),
        waitMeanMs: wait.count > 0 ? round2((wait.sum / wait.count) * 1000) : 0,
        waitP99Ms: round2(histogramQuantile(wait, 0.99) * 1000),
      };
    })
    .filter((l) => l.perSecond > 0 || l.rejected > 0)
    .sort((a, b) => b.perSecond - a.perSecond);
  return {
    seconds: round2(seconds),
    requestsPerSecond: round2(total / seconds),
    failed: after.failed - before.failed,
    requests: rows(after.latency, before.latency, seconds, top, after.requests, before.requests),
    etcd: rows(after.etcd, before.etcd, seconds, top),
    priorityLevels: levels,
  };
}
