// How much of a small JSON request survives V8's scavenges into the old generation, sent over
// node:http2 (one session, as the fleet's Lease client sent its renewals until 2026-11-28) and
// over HTTP/1.1 keep-alive through the fleet's own transport (as it sends them since), at a fleet's idle pace: 100
// requests a second, each answered 30 ms later by a server in the same process, beside 4 MB a
// second of short-lived garbage, with the young generation held small as the fleet holds it.
// What is promoted fills the old generation between full GCs, so it sets how often a fleet
// marks its whole heap (docs/performance.md, "The Lease renewals back on HTTP/1.1").
//
//   node build/bench/agent/h2-promotion.js            both transports, one child each
//   node build/bench/agent/h2-promotion.js h2 | h1    one child's work (run with --trace-gc-nvp)
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import type { Cluster, V1Lease } from '@kubernetes/client-node';
import { createApiTransport } from '../../src/kube/api-transport.js';
import { createClusterAccess } from '../../src/kube/cluster-access.js';
import { unlimited } from '../../src/kube/rate-limiter.js';
import { createCoordinationV1Api } from '../../src/kube/typed-apis.js';

const RATE_PER_TICK = 10;
const TICK_MS = 100;
const ANSWER_MS = 30;
const WINDOW_MS = 20_000;

type Transport = 'h2' | 'h1';

const answer = JSON.stringify({ kind: 'Lease', metadata: { name: 'sim-0001', resourceVersion: '123456' }, spec: { holderIdentity: 'sim-0001', leaseDurationSeconds: 40, renewTime: new Date().toISOString() } });
const PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/sim-0001';

async function h2Client(): Promise<() => Promise<unknown>> {
  const server = http2.createServer();
  server.on('stream', (s) => {
    s.resume();
    s.on('end', () => setTimeout(() => (s.respond({ ':status': 200, 'content-type': 'application/json' }), s.end(answer)), ANSWER_MS));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return () =>
    new Promise((resolve, reject) => {
      const stream = session.request({ ':method': 'PUT', ':path': PATH, 'content-type': 'application/json' });
      let text = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (text += chunk));
      stream.on('end', () => resolve(JSON.parse(text)));
      stream.on('error', reject);
      stream.end(answer);
    });
}

async function h1Client(): Promise<() => Promise<unknown>> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => (res.setHeader('content-type', 'application/json'), res.end(answer)), ANSWER_MS));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The Lease calls the fleet sends (src/kube/lease-client.ts builds them so), here without TLS.
  // A literal kubeconfig: client-node's KubeConfig would load its models into the child's heap.
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const kc = { getCurrentCluster: () => ({ name: 'c', server: url, skipTLSVerify: false }) as Cluster, getCurrentUser: () => null };
  const leases = createCoordinationV1Api(createApiTransport(createClusterAccess(kc), { limiter: unlimited, userAgent: '' }));
  const body = JSON.parse(answer) as V1Lease;
  return () => leases.replaceNamespacedLease({ name: 'sim-0001', namespace: 'kube-node-lease', body });
}

async function work(transport: Transport): Promise<void> {
  const send = transport === 'h2' ? await h2Client() : await h1Client();
  const garbage = setInterval(() => {
    const a: object[] = [];
    for (let i = 0; i < 1000; i++) a.push({ i, s: `v${i}` });
  }, 10);
  const sending = setInterval(() => {
    for (let i = 0; i < RATE_PER_TICK; i++) send().catch(() => undefined);
  }, TICK_MS);
  await delay(WINDOW_MS);
  clearInterval(sending);
  clearInterval(garbage);
  process.exit(0);
}

/** Runs one transport in a child with V8's per-GC trace and adds up what its scavenges promoted. */
function measure(transport: Transport): { promotedKiB: number; scavenges: number; perRequestBytes: number } {
  const script = fileURLToPath(import.meta.url);
  const out = spawnSync(process.execPath, ['--max-semi-space-size=1', '--trace-gc-nvp', script, transport], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (out.status !== 0) throw new Error(`${transport} child failed: ${out.stderr}`);
  let promoted = 0;
  let scavenges = 0;
  for (const line of out.stdout.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    scavenges++;
    promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
  }
  const requests = (WINDOW_MS / TICK_MS) * RATE_PER_TICK;
  return { promotedKiB: Math.round(promoted / 1024), scavenges, perRequestBytes: Math.round(promoted / requests) };
}

const mode = process.argv[2];
if (mode === 'h2' || mode === 'h1') {
  await work(mode);
} else {
  for (const transport of ['h2', 'h1'] as const) {
    const r = measure(transport);
    console.log(`${transport === 'h2' ? 'HTTP/2 (node:http2, one session)' : 'HTTP/1.1 keep-alive (the fleet\'s transport)'}: ${r.promotedKiB} KiB promoted by ${r.scavenges} scavenges over ${WINDOW_MS / 1000} s, about ${r.perRequestBytes} bytes a request`);
  }
}
