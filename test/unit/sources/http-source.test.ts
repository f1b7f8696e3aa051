// Mirrors pkg/kubelet/config/http_test.go (HS-*), plus the implied http.go behaviour and a
// k0s/Talos-style `/manifests` PodList server.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { hasErrorCode } from '../../../src/errors.js';
import type { V1Container } from '@kubernetes/client-node';
import type { Pod } from '../../../src/pod/types.js';
import { createHttpSource, type HttpSourceOptions } from '../../../src/sources/http-source.js';
import type { PodUpdate, SourceLogger } from '../../../src/sources/types.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import { flush, Recorder } from '../../helpers/wait.js';

/** A local server whose next answers the test sets; records request headers. */
let server: Server;
let base = '';
let reply: { status: number; body: string | Buffer } = { status: 200, body: '' };
const requests: { url: string; headers: IncomingHttpHeaders; raw: string[] }[] = [];

before(async () => {
  server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', headers: req.headers, raw: req.rawHeaders });
    res.statusCode = reply.status;
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function source(options: Partial<HttpSourceOptions> & { url: string }) {
  const rec = new Recorder<PodUpdate>();
  const src = createHttpSource({ nodeName: 'different-value', onUpdate: rec.push, ...options });
  return { rec, src };
}

const deadURL = 'http://127.0.0.1:9/_not_found_';

describe('HS http source', () => {
  test('HS-1 TestURLErrorNotExistNoUpdate', async () => {
    const { rec, src } = source({ url: deadURL, nodeName: 'localhost', httpCheckFrequencyMs: 1 });
    const errors: unknown[] = [];
    const logger: SourceLogger = { error: (f) => errors.push(f), warn() {}, info() {}, debug() {} };
    const logged = createHttpSource({ url: deadURL, nodeName: 'localhost', onUpdate: rec.push, logger, httpCheckFrequencyMs: 60_000 });
    logged.start();
    src.start();
    const { waitFor } = await import('../../helpers/wait.js');
    await waitFor(() => errors.length > 0, 'the failed fetch to be logged');
    src.stop();
    logged.stop();
    assert.equal(rec.items.length, 0);
  });

  test('HS-2 TestExtractFromHttpBadness', async () => {
    const { rec, src } = source({ url: deadURL, nodeName: 'other' });
    await assert.rejects(src.extractFromURL(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_HTTP_FETCH'));
    assert.equal(rec.items.length, 0);
  });

  const invalid: { desc: string; pod: Record<string, unknown> }[] = [
    { desc: 'No version', pod: { apiVersion: '' } },
    { desc: 'Invalid version', pod: { apiVersion: 'v1betta2' } },
    { desc: 'Invalid volume name', pod: { apiVersion: 'v1', spec: { volumes: [{ name: '_INVALID_' }] } } },
    { desc: 'Duplicate volume names', pod: { apiVersion: 'v1', spec: { volumes: [{ name: 'repeated' }, { name: 'repeated' }] } } },
    { desc: 'Unspecified container name', pod: { apiVersion: 'v1', spec: { containers: [{ name: '' }] } } },
    { desc: 'Invalid container name', pod: { apiVersion: 'v1', spec: { containers: [{ name: '_INVALID_' }] } } },
  ];
  const strongerExpect: Record<string, RegExp> = {
    'No version': /Object 'apiVersion' is missing/,
    'Invalid version': /no kind "Pod" is registered for version "v1betta2"/,
    'Invalid volume name': /spec\.volumes\[0\]\.name: Invalid value: "_INVALID_"/,
    'Duplicate volume names': /spec\.volumes\[1\]\.name: Duplicate value: "repeated"/,
    'Unspecified container name': /spec\.containers\[0\]\.name: Required value/,
    'Invalid container name': /spec\.containers\[0\]\.name: Invalid value: "_INVALID_"/,
  };
  for (const c of invalid) {
    test(`HS-3 TestExtractInvalidPods/${c.desc}`, async () => {
      reply = { status: 200, body: JSON.stringify(c.pod) };
      const { rec, src } = source({ url: `${base}/invalid` });
      await assert.rejects(src.extractFromURL());
      assert.equal(rec.items.length, 0);
    });

    test(`HS-3 TestExtractInvalidPods/${c.desc} (with kind and name)`, async () => {
      const spec = { containers: [{ name: 'c', image: 'i' }], ...(c.pod.spec as object | undefined) };
      reply = { status: 200, body: JSON.stringify({ ...c.pod, kind: 'Pod', metadata: { name: 'foo' }, spec }) };
      const { rec, src } = source({ url: `${base}/invalid-strong` });
      await assert.rejects(src.extractFromURL(), (err: Error) => {
        assert.match(err.message, strongerExpect[c.desc]!);
        return true;
      });
      assert.equal(rec.items.length, 0);
    });
  }

  const expectedPod = (name: string, uid: string, namespace: string, container: Record<string, unknown>): Pod => ({
    metadata: { uid, name: `${name}-different-value`, namespace, annotations: { 'kubernetes.io/config.hash': uid } },
    spec: {
      nodeName: 'different-value',
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      securityContext: {},
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      enableServiceLinks: true,
      containers: [{ terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', ...container } as V1Container],
    },
    status: { phase: 'Pending' },
  });

  test('HS-4 TestExtractPodsFromHTTP/Single pod', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'foo', uid: '111', namespace: 'mynamespace' },
        spec: {
          nodeName: 'different-value',
          containers: [{ name: '1', image: 'foo', imagePullPolicy: 'Always', terminationMessagePolicy: 'File' }],
          securityContext: {},
          schedulerName: 'default-scheduler',
        },
        status: { phase: 'Pending' },
      }),
    };
    const { rec, src } = source({ url: `${base}/single` });
    await src.extractFromURL();
    assert.deepEqual(rec.items, [
      { op: 'SET', source: 'http', pods: [expectedPod('foo', '111', 'mynamespace', { name: '1', image: 'foo', imagePullPolicy: 'Always' })] },
    ]);
  });

  test('HS-4 TestExtractPodsFromHTTP/Multiple pods', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PodList',
        items: [
          { metadata: { name: 'foo', uid: '111' }, spec: { nodeName: 'different-value', containers: [{ name: '1', image: 'foo', imagePullPolicy: 'Always' }] } },
          { metadata: { name: 'bar', uid: '222' }, spec: { nodeName: 'different-value', containers: [{ name: '2', image: 'bar:bartag', imagePullPolicy: '' }] } },
        ],
      }),
    };
    const { rec, src } = source({ url: `${base}/multiple` });
    await src.extractFromURL();
    assert.deepEqual(rec.items, [
      {
        op: 'SET',
        source: 'http',
        pods: [
          expectedPod('foo', '111', 'default', { name: '1', image: 'foo', imagePullPolicy: 'Always' }),
          expectedPod('bar', '222', 'default', { name: '2', image: 'bar:bartag', imagePullPolicy: 'IfNotPresent' }),
        ],
      },
    ]);
  });

  test('HS-5 TestURLWithHeader', async () => {
    reply = {
      status: 200,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'foo', uid: '111', namespace: 'mynamespace' },
        spec: { nodeName: 'localhost', containers: [{ name: '1', image: 'foo', imagePullPolicy: 'Always' }] },
      }),
    };
    requests.length = 0;
    const { rec, src } = source({ url: `${base}/header`, nodeName: 'localhost', headers: { 'Metadata-Flavor': ['Google'] } });
    await src.extractFromURL();
    const raw = requests[0]!.raw;
    const values = raw.filter((_, i) => i % 2 === 1 && raw[i - 1]!.toLowerCase() === 'metadata-flavor');
    assert.deepEqual(values, ['Google']);
    assert.equal(rec.items.length, 1);
    assert.equal(rec.items[0]!.pods.length, 1);
  });
});

describe('http source: implied behaviour', () => {
  const podBody = JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });

  test('non-200: nothing sent, error "<url>: <status>"', async () => {
    reply = { status: 404, body: 'nope' };
    const url = `${base}/missing`;
    const { rec, src } = source({ url, headers: { Authorization: ['Bearer s3cret'] } });
    await assert.rejects(src.extractFromURL(), (err: Error) => {
      assert.equal(err.message, `${url}: 404 Not Found`);
      assert.doesNotMatch(err.message, /s3cret/);
      return true;
    });
    assert.equal(rec.items.length, 0);
  });

  test('empty body: SET [] and "zero-length data received from <url>"', async () => {
    reply = { status: 200, body: '' };
    const url = `${base}/empty`;
    const { rec, src } = source({ url });
    await assert.rejects(src.extractFromURL(), (err: Error) => err.message === `zero-length data received from ${url}`);
    assert.deepEqual(rec.items, [{ op: 'SET', source: 'http', pods: [] }]);
  });

  test('an identical body sends nothing; a bad body is remembered and not re-parsed', async () => {
    reply = { status: 200, body: podBody };
    const { rec, src } = source({ url: `${base}/same` });
    await src.extractFromURL();
    await src.extractFromURL();
    assert.equal(rec.items.length, 1);
    reply = { status: 200, body: 'kind: Nonsense\n' };
    await assert.rejects(src.extractFromURL(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_HTTP_PARSE'));
    await src.extractFromURL();
    assert.equal(rec.items.length, 1, 'the same bad body neither fails again nor sends');
  });

  test('HTTP pods get no toleration and a URL-salted UID; API references are refused', async () => {
    reply = { status: 200, body: podBody };
    const { rec, src } = source({ url: `${base}/tol` });
    await src.extractFromURL();
    const pod = rec.items[0]!.pods[0]!;
    assert.equal(pod.spec?.tolerations, undefined);
    assert.match(pod.metadata?.uid ?? '', /^[0-9a-f]{32}$/);
    reply = { status: 200, body: podBody.replace('"containers"', '"serviceAccountName":"robot","containers"') };
    await assert.rejects(src.extractFromURL(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_API_REFERENCE'));
  });

  test('a PodList served on /manifests the way k0s and Talos do; one invalid item rejects the list', async () => {
    const item = (name: string) => ({ metadata: { name, namespace: 'kube-system' }, spec: { containers: [{ name: 'c', image: `${name}:v1` }] } });
    reply = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [item('kube-apiserver'), item('etcd')] }) };
    const { rec, src } = source({ url: `${base}/manifests`, nodeName: 'worker-0', httpCheckFrequencyMs: 20 });
    src.start();
    const update = await rec.next('the SET from /manifests');
    src.stop();
    assert.deepEqual(update.pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`), ['kube-system/kube-apiserver-worker-0', 'kube-system/etcd-worker-0']);
    reply = { status: 200, body: JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [item('ok'), item('Bad_Name')] }) };
    await assert.rejects(src.extractFromURL(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_INVALID_POD'));
    await flush();
    assert.equal(rec.items.length, 1);
  });

  test('polls again after each poll ends; the timeout aborts a hanging request', async () => {
    reply = { status: 200, body: podBody };
    requests.length = 0;
    const { src } = source({ url: `${base}/poll`, httpCheckFrequencyMs: 10 });
    src.start();
    const { waitFor } = await import('../../helpers/wait.js');
    await waitFor(() => requests.filter((r) => r.url === '/poll').length >= 3, 'three polls');
    src.stop();
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`;
    const slow = source({ url, timeoutMs: 50 });
    await assert.rejects(slow.src.extractFromURL(), (err) => hasErrorCode(err, 'KP_ERR_SOURCE_HTTP_FETCH'));
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
  });
});

describe('http source: stop and start again', () => {
  const body = (name: string): string =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });

  test('polls every httpCheckFrequency on the clock; after stop() nothing, after start() the set again', async () => {
    const clock = new FakeClock();
    let served = body('one');
    let fetches = 0;
    const fakeFetch = (async () => {
      fetches += 1;
      return new Response(served, { status: 200 });
    }) as typeof fetch;
    const { rec, src } = source({ url: 'http://manifests.invalid/pods', fetch: fakeFetch, clock, httpCheckFrequencyMs: 1_000 });
    src.start();
    await clock.advance(0);
    assert.deepEqual(rec.items.map((u) => u.pods.map((p) => p.metadata?.name)), [['one-different-value']]);
    await clock.advance(1_000);
    assert.equal(fetches, 2, 'polled again after httpCheckFrequency');
    assert.equal(rec.items.length, 1, 'the same body sends nothing');

    await src.stop();
    served = body('two');
    await clock.advance(5_000);
    assert.equal(fetches, 2, 'no poll while stopped');
    assert.equal(clock.pendingTimers, 0, 'no timer left behind');

    src.start();
    await clock.advance(0);
    assert.deepEqual(rec.items.at(-1)?.pods.map((p) => p.metadata?.name), ['two-different-value']);
    await src.stop();
    src.start();
    await clock.advance(0);
    assert.equal(rec.items.length, 3, 'a restarted source sends its set even when the body did not change');
    assert.deepEqual(rec.items.at(-1)?.pods.map((p) => p.metadata?.name), ['two-different-value']);
    await src.stop();
  });

  test('a poll in flight when stop() is called sends nothing, and stop() waits for it', async () => {
    const clock = new FakeClock();
    let release: (() => void) | undefined;
    const fakeFetch = ((_url: string, init?: RequestInit) =>
      new Promise<Response>((resolve, reject) => {
        release = () => resolve(new Response(body('late'), { status: 200 }));
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      })) as typeof fetch;
    const { rec, src } = source({ url: 'http://manifests.invalid/pods', fetch: fakeFetch, clock });
    src.start();
    await clock.advance(0);
    assert.ok(release, 'the request is in flight');
    await src.stop();
    release?.();
    await clock.advance(0);
    assert.equal(rec.items.length, 0);
  });
});
