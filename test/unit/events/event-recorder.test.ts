// Mirrors client-go tools/record/event_test.go (TestEventf, TestWriteEventError, TestUpdateExpiredEvent,
// TestEventfNoNamespace): the shape of the kubelet's events, repeats as PATCHes, failures that never
// reach the caller, and the event client's own rate limit, on the FakeClock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, type CoreV1Event } from '@kubernetes/client-node';
import { createEventRecorder, type EventApi, type EventRecorderOptions, type EventWriteResult } from '../../../src/events/event-recorder.js';
import { nodeEventRef, podEventRef } from '../../../src/events/static-pod-events.js';
import { createTokenBucket, type RateLimiter } from '../../../src/kube/rate-limiter.js';
import type { Logger } from '../../../src/logger.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

interface Call {
  verb: 'create' | 'patch';
  namespace: string;
  name: string;
  body: Record<string, unknown>;
  hasOptions: boolean;
}

/** An in-memory event API: records calls; `fail` decides per call whether (and how) it fails. */
class FakeEventApi {
  readonly calls: Call[] = [];
  readonly stored = new Map<string, CoreV1Event>();
  fail: ((call: Call) => unknown) | undefined;
  hold: Promise<void> | undefined;
  limiter: RateLimiter | undefined;

  readonly api = {
    createNamespacedEvent: async (req: { namespace: string; body: CoreV1Event }) => {
      const call: Call = { verb: 'create', namespace: req.namespace, name: req.body.metadata.name ?? '', body: req.body as never, hasOptions: false };
      return this.#run(call, () => {
        this.stored.set(`${req.namespace}/${call.name}`, req.body);
        return req.body;
      });
    },
    patchNamespacedEvent: async (req: { name: string; namespace: string; body: Record<string, unknown> }, options?: unknown) => {
      const call: Call = { verb: 'patch', namespace: req.namespace, name: req.name, body: req.body, hasOptions: options !== undefined };
      return this.#run(call, () => {
        const existing = this.stored.get(`${req.namespace}/${req.name}`);
        if (!existing) throw statusError(404, 'NotFound');
        const updated = { ...existing, ...req.body } as CoreV1Event;
        this.stored.set(`${req.namespace}/${req.name}`, updated);
        return updated;
      });
    },
  } as unknown as EventApi;

  async #run(call: Call, apply: () => CoreV1Event): Promise<CoreV1Event> {
    await this.limiter?.acquire();
    await this.hold;
    this.calls.push(call);
    const err = this.fail?.(call);
    if (err !== undefined) throw err;
    return apply();
  }
}

function statusError(code: number, reason: string, message = reason): ApiException<string> {
  return new ApiException(code, `HTTP-Code: ${code} Headers: {"authorization":"Bearer secret"}`, JSON.stringify({ kind: 'Status', code, reason, message }), {});
}

interface LogLine {
  level: string;
  fields: Record<string, unknown>;
  msg: string;
}

function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at = (level: string) => (fields: object, msg?: string) => lines.push({ level, fields: fields as Record<string, unknown>, msg: msg ?? '' });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

function setup(options: Partial<EventRecorderOptions> = {}) {
  const clock = new FakeClock();
  const fake = new FakeEventApi();
  const { logger, lines } = captureLogger();
  const results: EventWriteResult[] = [];
  const recorder = createEventRecorder({ api: fake.api, nodeName: 'node-1', clock, logger, onResult: (r) => results.push(r), ...options });
  return { clock, fake, lines, results, recorder };
}

const NODE = nodeEventRef('node-1');
const MIRROR = { kind: 'Pod', name: 'web-node-1', namespace: 'team-a', uid: 'static-hash' } as const;

describe('TestEventf', () => {
  it("an event on the Node: the kubelet's source and reference, in the default namespace", async () => {
    const { fake, recorder, clock } = setup();
    recorder.event(NODE, 'Warning', 'FailedCreateMirrorPod', 'refused');
    await recorder.idle();
    assert.equal(fake.calls.length, 1);
    const [call] = fake.calls;
    assert.equal(call!.verb, 'create');
    assert.equal(call!.namespace, 'default');
    const body = call!.body as unknown as CoreV1Event;
    assert.deepEqual(body.involvedObject, { kind: 'Node', name: 'node-1', uid: 'node-1' });
    assert.deepEqual(body.source, { component: 'kubelet', host: 'node-1' });
    assert.equal(body.reportingComponent, 'kubelet');
    assert.equal(body.reportingInstance, 'node-1');
    assert.equal(body.type, 'Warning');
    assert.equal(body.reason, 'FailedCreateMirrorPod');
    assert.equal(body.count, 1);
    assert.deepEqual(body.firstTimestamp, clock.now());
    assert.match(body.metadata.name!, /^node-1\.[0-9a-f]+$/);
  });

  it("an event on a mirror pod: in the pod's namespace, with the static pod's hash as UID", async () => {
    const { fake, recorder } = setup();
    recorder.event(MIRROR, 'Warning', 'FailedValidation', 'duplicate');
    await recorder.idle();
    const body = fake.calls[0]!.body as unknown as CoreV1Event;
    assert.equal(fake.calls[0]!.namespace, 'team-a');
    assert.deepEqual(body.involvedObject, { kind: 'Pod', apiVersion: 'v1', namespace: 'team-a', name: 'web-node-1', uid: 'static-hash' });
  });

  it("a container event: the kubelet's pod reference with the container's field path (and an API pod's resourceVersion)", async () => {
    const { fake, recorder } = setup();
    const staticPod = { metadata: { name: 'web-node-1', namespace: 'team-a', uid: 'static-uid' } };
    recorder.event(podEventRef(staticPod, 'spec.containers{main}'), 'Normal', 'Started', 'Started container main');
    recorder.event(podEventRef({ metadata: { ...staticPod.metadata, uid: 'api-uid', resourceVersion: '42' } }, undefined), 'Normal', 'SandboxChanged', 'x');
    await recorder.idle();
    const [started, changed] = fake.calls.map((c) => (c.body as unknown as CoreV1Event).involvedObject);
    assert.deepEqual(started, { kind: 'Pod', apiVersion: 'v1', namespace: 'team-a', name: 'web-node-1', uid: 'static-uid', fieldPath: 'spec.containers{main}' });
    assert.deepEqual(changed, { kind: 'Pod', apiVersion: 'v1', namespace: 'team-a', name: 'web-node-1', uid: 'api-uid', resourceVersion: '42' });
  });

  it('a repeat PATCHes count, lastTimestamp and message of the stored event (strategic merge patch)', async () => {
    const { fake, recorder, clock, results } = setup();
    recorder.event(NODE, 'Warning', 'FailedCreateMirrorPod', 'refused');
    await recorder.idle();
    await clock.advance(30_000);
    recorder.event(NODE, 'Warning', 'FailedCreateMirrorPod', 'refused');
    recorder.event(NODE, 'Warning', 'FailedCreateMirrorPod', 'refused');
    await recorder.idle();
    assert.deepEqual(fake.calls.map((c) => c.verb), ['create', 'patch', 'patch']);
    const patch = fake.calls[2]!;
    assert.equal(patch.name, fake.calls[0]!.name);
    assert.deepEqual(Object.keys(patch.body).sort(), ['count', 'lastTimestamp', 'message']);
    assert.equal(patch.body.count, 3);
    assert.ok(patch.hasOptions, 'sent with the patch content type');
    assert.equal(fake.stored.size, 1, 'one Event in the API, with a count');
    assert.equal([...fake.stored.values()][0]!.count, 3);
    assert.deepEqual(results, ['created', 'patched', 'patched']);
  });

  it('messages longer than 1024 characters are cut', async () => {
    const { fake, recorder } = setup();
    recorder.event(NODE, 'Warning', 'X', 'y'.repeat(5000));
    await recorder.idle();
    assert.equal(String(fake.calls[0]!.body.message).length, 1024);
  });
});

describe('TestUpdateExpiredEvent', () => {
  it('a repeat of an event that is gone (404 on PATCH) creates it again, with its count', async () => {
    const { fake, recorder } = setup();
    recorder.event(NODE, 'Warning', 'R', 'm');
    await recorder.idle();
    fake.stored.clear(); // expired (the API server's event TTL)
    recorder.event(NODE, 'Warning', 'R', 'm');
    await recorder.idle();
    assert.deepEqual(fake.calls.map((c) => c.verb), ['create', 'patch', 'create']);
    assert.equal(fake.calls[2]!.body.count, 2);
  });
});

describe('TestWriteEventError', () => {
  it('failed writes never reach the caller: logged once, dropped, and one line when writes succeed again', async () => {
    const { fake, recorder, lines, results } = setup();
    fake.fail = () => statusError(403, 'Forbidden', 'events is forbidden: User "system:node:node-1" cannot create');
    recorder.event(NODE, 'Warning', 'A', 'one');
    recorder.event(NODE, 'Warning', 'B', 'two');
    await recorder.idle();
    fake.fail = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    recorder.event(NODE, 'Warning', 'C', 'three');
    await recorder.idle();
    const warnings = lines.filter((l) => l.level === 'warn');
    assert.equal(warnings.length, 1, 'one warning for the whole outage');
    assert.equal(warnings[0]!.msg, 'event write failed; dropping events until a write succeeds');
    assert.equal(warnings[0]!.fields.errorCode, 'KP_ERR_EVENT_WRITE');
    assert.equal(warnings[0]!.fields.httpStatus, 403);
    assert.equal(warnings[0]!.fields.eventReason, 'A');
    assert.doesNotMatch(JSON.stringify(warnings[0]!.fields) + String((warnings[0]!.fields.err as Error).cause), /Bearer|secret|Headers/);
    fake.fail = undefined;
    recorder.event(NODE, 'Warning', 'D', 'four');
    await recorder.idle();
    const recovered = lines.find((l) => l.msg === 'event writes succeed again');
    assert.deepEqual(recovered?.fields, { dropped: 3 });
    assert.deepEqual(results, ['dropped', 'dropped', 'dropped', 'created']);
  });

  it('AlreadyExists (the same event written before) is not a failure', async () => {
    const { fake, recorder, lines } = setup();
    fake.fail = () => statusError(409, 'AlreadyExists');
    recorder.event(NODE, 'Warning', 'A', 'one');
    await recorder.idle();
    assert.equal(lines.filter((l) => l.level === 'warn').length, 0);
  });

  it('never blocks: with the API hanging, event() returns at once; beyond maxQueued events are dropped with one warning', async () => {
    const { fake, recorder, lines, results } = setup({ maxQueued: 3 });
    let release!: () => void;
    fake.hold = new Promise((resolve) => (release = resolve));
    for (let i = 0; i < 10; i++) recorder.event(NODE, 'Warning', 'R', `m${i}`);
    // One in flight, three queued, six dropped.
    assert.equal(results.filter((r) => r === 'dropped').length, 6);
    assert.equal(lines.filter((l) => l.msg === 'too many queued events, dropping events').length, 1);
    release();
    await recorder.idle();
    assert.equal(fake.calls.length, 4);
  });

  it('stop() drops what is queued, waits for the write in flight, and ignores later events', async () => {
    const { fake, recorder } = setup();
    let release!: () => void;
    fake.hold = new Promise((resolve) => (release = resolve));
    recorder.event(NODE, 'Warning', 'R', 'a');
    recorder.event(NODE, 'Warning', 'R', 'b');
    let stopped = false;
    const stopping = recorder.stop().then(() => (stopped = true));
    await Promise.resolve();
    assert.equal(stopped, false, 'waits for the write in flight');
    release();
    await stopping;
    recorder.event(NODE, 'Warning', 'R', 'c');
    await recorder.idle();
    assert.equal(fake.calls.length, 1);
  });
});

describe('the event client rate limit (eventRecordQPS / eventBurst)', () => {
  it('writes wait for the event bucket: a burst of eventBurst, then eventRecordQPS per second; callers never wait', async () => {
    const { fake, recorder, clock } = setup();
    fake.limiter = createTokenBucket({ qps: 2, burst: 3, clock });
    for (let i = 0; i < 6; i++) recorder.event({ kind: 'Node', name: `node-${i}`, uid: `node-${i}` }, 'Warning', 'R', 'm');
    await clock.advance(0);
    assert.equal(fake.calls.length, 3, 'the burst');
    await clock.advance(499);
    assert.equal(fake.calls.length, 3);
    await clock.advance(1);
    assert.equal(fake.calls.length, 4, 'one more every 500 ms at 2 QPS');
    await clock.advance(1000);
    assert.equal(fake.calls.length, 6);
  });

  it('the spam filter drops an object\'s 26th event at once, without a request', async () => {
    const { fake, recorder, results } = setup();
    for (let i = 0; i < 26; i++) recorder.event(NODE, 'Warning', 'R', 'm');
    await recorder.idle();
    assert.equal(fake.calls.length, 25);
    assert.equal(results.at(-1), 'spam-filtered');
    assert.equal(fake.stored.size, 1);
    assert.equal([...fake.stored.values()][0]!.count, 25);
  });
});
