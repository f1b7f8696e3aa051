// The agent's HTTP endpoints (the kubelet's read-only port and healthz server,
// pkg/kubelet/server/server_test.go), served on port 0 and queried with real requests.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1PodList } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import type { Logger } from '../../../src/logger.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { createAgentMetrics } from '../../../src/server/agent-metrics.js';
import { healthzRoute } from '../../../src/server/healthz.js';
import { metricsRoute } from '../../../src/server/metrics.js';
import { podsRoute } from '../../../src/server/pods.js';
import { createAgentServer, type AgentServer, type BoundAddress } from '../../../src/server/server.js';

function pod(name: string, uid: string, annotations: Record<string, string>): Pod {
  return { metadata: { name, namespace: 'default', uid, annotations }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'busybox' }] } };
}

describe('agent HTTP server', () => {
  const registry = new Registry();
  const metrics = createAgentMetrics(registry);
  const podManager = new PodManager();
  podManager.setPods([
    pod('static-web', 'static-uid', { [CONFIG_SOURCE_ANNOTATION_KEY]: 'file' }),
    pod('static-web', 'mirror-uid', { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api', [CONFIG_MIRROR_ANNOTATION_KEY]: 'static-uid' }),
    pod('api-pod', 'api-uid', { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api' }),
  ]);
  let server: AgentServer;
  let bound: BoundAddress;
  const url = (path: string) => `http://127.0.0.1:${bound.port}${path}`;

  before(async () => {
    server = createAgentServer({
      port: 0,
      routes: [
        healthzRoute(),
        podsRoute({ podManager, statusFor: (p) => (p.metadata?.uid === 'static-uid' ? { phase: 'Running' } : undefined) }),
        metricsRoute({ registry }),
      ],
    });
    bound = await server.listen();
  });
  after(() => server.close());

  it('binds 127.0.0.1 by default and reports the real port for port 0', () => {
    assert.equal(bound.address, '127.0.0.1');
    assert.ok(bound.port > 0);
  });

  it('/healthz answers ok', async () => {
    const res = await fetch(url('/healthz'));
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'ok');
  });

  it('/pods lists the non-mirror pods as a v1 PodList, with provided statuses', async () => {
    const res = await fetch(url('/pods'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /application\/json/);
    const list = (await res.json()) as V1PodList;
    assert.equal(list.kind, 'PodList');
    assert.equal(list.apiVersion, 'v1');
    const uids = list.items.map((p) => p.metadata?.uid).sort();
    assert.deepEqual(uids, ['api-uid', 'static-uid']);
    assert.equal(list.items.find((p) => p.metadata?.uid === 'static-uid')?.status?.phase, 'Running');
  });

  it('/metrics serves the registry in the Prometheus text format', async () => {
    metrics.setMirrorPods(1);
    metrics.setDesiredPods({ static: 1, nonStatic: 1 });
    metrics.recordMirrorOperation('create', 'success');
    metrics.recordStatusWrite('success');
    metrics.recordSourceError('http');
    metrics.observeSyncDuration(0.02);
    const res = await fetch(url('/metrics'));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    const text = await res.text();
    assert.match(text, /^kubelet_mirror_pods 1$/m);
    assert.match(text, /^kubelet_desired_pods\{static="true"\} 1$/m);
    assert.match(text, /^kubelet_desired_pods\{static=""\} 1$/m);
    assert.match(text, /^kubelet_pods_mirror_operations_total\{operation="create",result="success"\} 1$/m);
    assert.match(text, /^kubelet_pods_status_writes_total\{result="success"\} 1$/m);
    assert.match(text, /^kubelet_pods_source_errors_total\{source="http"\} 1$/m);
    assert.match(text, /^kubelet_pods_sync_duration_seconds_count 1$/m);
    assert.match(text, /^# TYPE kubelet_pods_sync_duration_seconds histogram$/m);
  });

  it('answers 404 for unknown paths and 405 for other methods', async () => {
    assert.equal((await fetch(url('/nope'))).status, 404);
    const post = await fetch(url('/healthz'), { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('answers HEAD without a body', async () => {
    const res = await fetch(url('/healthz'), { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '');
  });

  it('ignores query strings when routing', async () => {
    assert.equal((await fetch(url('/healthz?verbose=1'))).status, 200);
  });

  it('answers 500 when an endpoint throws, logs the failure as an Error, and keeps serving', async () => {
    const logged: { level: string; obj: Record<string, unknown>; msg: string | undefined }[] = [];
    const record = (level: string) => (obj: object, msg?: string) => logged.push({ level, obj: obj as Record<string, unknown>, msg });
    const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
    const cause = new Error('boom');
    const failing = createAgentServer({ logger, routes: [{ path: '/boom', handle: () => Promise.reject(cause) }] });
    const b = await failing.listen();
    try {
      assert.equal((await fetch(`http://127.0.0.1:${b.port}/boom`)).status, 500);
      assert.equal((await fetch(`http://127.0.0.1:${b.port}/boom`)).status, 500);
    } finally {
      await failing.close();
    }
    const errors = logged.filter((l) => l.level === 'error');
    assert.equal(errors.length, 2);
    for (const { obj, msg } of errors) {
      assert.equal(msg, 'endpoint failed');
      assert.equal(obj.path, '/boom');
      assert.ok(hasErrorCode(obj.err, 'KP_ERR_SERVER_ENDPOINT'), 'err is the registry error');
      assert.equal(obj.err.cause, cause);
    }
  });

  it('close() of a server that is not listening resolves', async () => {
    const s = createAgentServer({ routes: [healthzRoute()] });
    await s.close();
    await s.listen();
    await s.close();
    await s.close();
  });
});

describe('createAgentServer listen errors', () => {
  it('rejects with KP_ERR_CONFIG_LISTEN when the port is taken', async () => {
    const first = createAgentServer({ routes: [healthzRoute()] });
    const { port } = await first.listen();
    try {
      const second = createAgentServer({ port, routes: [healthzRoute()] });
      await assert.rejects(second.listen(), (err: unknown) => hasErrorCode(err, 'KP_ERR_CONFIG_LISTEN') && err.message.includes(String(port)));
      await second.close();
    } finally {
      await first.close();
    }
  });
});
