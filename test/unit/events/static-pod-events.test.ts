// Which event each static and mirror pod problem becomes, on which object (docs/events.md). The
// kubelet's counterpart is pkg/kubelet/config/config_test.go for FailedValidation; the other
// reasons have none (the kubelet only logs them).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kpError } from '../../../src/errors.js';
import type { EventObjectRef, EventRecorder, EventType } from '../../../src/events/event-recorder.js';
import { createStaticPodEvents, mirrorEventRef } from '../../../src/events/static-pod-events.js';
import { ApiStatusError } from '../../../src/kube/api-error.js';
import type { Pod } from '../../../src/pod/types.js';
import { createFileSource } from '../../../src/sources/file-source.js';
import { retainedBytesPer } from '../../helpers/retained-bytes.js';
import { createHttpSource } from '../../../src/sources/http-source.js';
import { createPodConfig } from '../../../src/sources/pod-config.js';

interface Recorded {
  object: EventObjectRef;
  type: EventType;
  reason: string;
  message: string;
}

function setup(mirrors: Record<string, Pod> = {}) {
  const recorded: Recorded[] = [];
  const recorder: EventRecorder = {
    event: (object, type, reason, message) => recorded.push({ object, type, reason, message }),
    idle: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  };
  const events = createStaticPodEvents({ recorder, nodeName: 'node-1', getMirrorPod: (name) => mirrors[name] });
  return { events, recorded };
}

const NODE_REF = { kind: 'Node', name: 'node-1', uid: 'node-1' };

function staticPod(name = 'web-node-1', hash = 'h-static'): Pod {
  return {
    metadata: { name, namespace: 'team-a', uid: hash, annotations: { 'kubernetes.io/config.hash': hash, 'kubernetes.io/config.source': 'file' } },
    spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'i' }] },
  };
}

function mirrorPod(hash: string): Pod {
  return { metadata: { name: 'web-node-1', namespace: 'team-a', uid: 'mirror-uid', annotations: { 'kubernetes.io/config.mirror': hash } } };
}

const refused = (code: number, reason: string, message: string) =>
  kpError('KP_ERR_MIRROR_CREATE', ['web-node-1_team-a', message], { cause: new ApiStatusError({ code, reason, message }) });

describe('mirror pod create failures', () => {
  it('a refusal by the API server: FailedCreateMirrorPod on the Node, with the server message', () => {
    const { events, recorded } = setup();
    const msg = 'admission webhook "deny.example.com" denied the request: no mirrors here';
    events.mirrorCreateFailed(staticPod(), 'web-node-1_team-a', refused(400, 'BadRequest', msg));
    assert.equal(recorded.length, 1);
    assert.deepEqual(recorded[0]!.object, NODE_REF);
    assert.equal(recorded[0]!.type, 'Warning');
    assert.equal(recorded[0]!.reason, 'FailedCreateMirrorPod');
    assert.ok(recorded[0]!.message.startsWith('Static pod team-a/web-node-1 has no mirror pod: '));
    assert.ok(recorded[0]!.message.includes(msg));
  });

  it('a mirror with another hash in the way: MirrorPodConflict on the Node and on that mirror, as kubectl describe finds it', () => {
    const { events, recorded } = setup({ 'web-node-1_team-a': mirrorPod('h-old') });
    events.mirrorCreateFailed(staticPod(), 'web-node-1_team-a', kpError('KP_ERR_MIRROR_HASH_CONFLICT', ['web-node-1_team-a', 'h-static', 'h-old']));
    assert.deepEqual(
      recorded.map((r) => [r.object, r.reason]),
      [
        [NODE_REF, 'MirrorPodConflict'],
        [{ kind: 'Pod', name: 'web-node-1', namespace: 'team-a', uid: 'h-old' }, 'MirrorPodConflict'],
      ],
    );
  });

  it('a pod the node may not read holds the name (create AlreadyExists): MirrorPodConflict on the Node', () => {
    const { events, recorded } = setup();
    events.mirrorCreateFailed(staticPod(), 'web-node-1_team-a', refused(409, 'AlreadyExists', 'pods "web-node-1" already exists'));
    assert.deepEqual(recorded.map((r) => r.reason), ['MirrorPodConflict']);
  });

  it('an outdated mirror whose deletion is refused: MirrorPodConflict on the Node and on that mirror, with the refusal', () => {
    const { events, recorded } = setup({ 'web-node-1_team-a': mirrorPod('h-old') });
    events.mirrorNotReplaced(staticPod(), mirrorPod('h-old'), 'web-node-1_team-a', new ApiStatusError({ code: 403, reason: 'Forbidden', message: 'denied by policy' }));
    assert.deepEqual(
      recorded.map((r) => [r.object.kind, r.object.uid, r.reason]),
      [
        ['Node', 'node-1', 'MirrorPodConflict'],
        ['Pod', 'h-old', 'MirrorPodConflict'],
      ],
    );
    assert.equal(
      recorded[0]!.message,
      'Static pod team-a/web-node-1 has no up-to-date mirror pod: the mirror pod in place (config.mirror "h-old") could not be deleted: denied by policy',
    );
  });

  it('no event when the API server did not answer, or the Node UID is missing', () => {
    const { events, recorded } = setup();
    events.mirrorCreateFailed(
      staticPod(),
      'web-node-1_team-a',
      kpError('KP_ERR_MIRROR_CREATE', ['web-node-1_team-a', 'connect ECONNREFUSED'], { cause: new ApiStatusError({ code: undefined, reason: undefined, message: 'x' }) }),
    );
    events.mirrorCreateFailed(staticPod(), 'web-node-1_team-a', kpError('KP_ERR_MIRROR_NODE_UID', ['node-1', 'node not found']));
    events.mirrorCreateFailed(staticPod(), 'web-node-1_team-a', new Error('anything else'));
    assert.deepEqual(recorded, []);
  });
});

it('mirrorEventRef: the UID is the config.mirror annotation; a pod that is not a mirror has none', () => {
  assert.deepEqual(mirrorEventRef(mirrorPod('abc')), { kind: 'Pod', name: 'web-node-1', namespace: 'team-a', uid: 'abc' });
  assert.equal(mirrorEventRef(staticPod()), undefined);
});

describe('manifests', () => {
  it('a manifest refused at decode: FailedDecodeStaticPod on the Node, naming the file and the reason, once per content', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kp-events-'));
    try {
      const { events, recorded } = setup();
      await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: BAD_NAME, image: i}]}\n');
      const source = createFileSource({ path: dir, nodeName: 'node-1', onUpdate: () => {}, onRejected: (path, err) => events.manifestRejected(path, err) });
      await source.listConfig();
      await source.listConfig();
      assert.equal(recorded.length, 1, 'the same content is reported once');
      assert.deepEqual(recorded[0]!.object, NODE_REF);
      assert.equal(recorded[0]!.reason, 'FailedDecodeStaticPod');
      assert.ok(recorded[0]!.message.startsWith(`Static pod manifest ${JSON.stringify(join(dir, 'bad.yaml'))} ignored: `), recorded[0]!.message);
      assert.match(recorded[0]!.message, /BAD_NAME/);
      await writeFile(join(dir, 'bad.yaml'), 'not: [a pod');
      await source.listConfig();
      assert.equal(recorded.length, 2, 'new content, new report');
      assert.match(recorded[1]!.message, /^Static pod manifest ".*bad\.yaml" ignored: couldn't parse as pod \(/, 'the path said once');
      await source.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a duplicate: DuplicateStaticPod on the Node naming both files, and the kubelet's FailedValidation on the kept pod's mirror", () => {
    const { events, recorded } = setup();
    const config = createPodConfig({ onEvent: (e) => events.duplicateIgnored(e) });
    const kept = staticPod('web-node-1', 'h-a');
    const dropped = staticPod('web-node-1', 'h-b');
    config.channel('file')({ op: 'SET', source: 'file', pods: [kept, dropped], origins: ['/etc/m/a.yaml', '/etc/m/b.yaml'] });
    assert.deepEqual(
      recorded.map((r) => [r.object, r.type, r.reason]),
      [
        [NODE_REF, 'Warning', 'DuplicateStaticPod'],
        [{ kind: 'Pod', name: 'web-node-1', namespace: 'team-a', uid: 'h-a' }, 'Warning', 'FailedValidation'],
      ],
    );
    assert.equal(
      recorded[0]!.message,
      'Static pod team-a/web-node-1 from "/etc/m/b.yaml" ignored: "/etc/m/a.yaml" of source "file" defines a pod of the same name, which is kept',
    );
    assert.equal(recorded[1]!.message, 'Error validating pod web-node-1_team-a(h-b) from file due to duplicate pod name "web-node-1", ignoring');
  });
});

it('a manifest URL body refused at decode: FailedDecodeStaticPod on the Node, the URL without credentials or query', async () => {
  const { events, recorded } = setup();
  const url = 'https://user:pass@config.example.com/pods.yaml?token=s3cret#x';
  const source = createHttpSource({
    url,
    nodeName: 'node-1',
    onUpdate: () => {},
    onRejected: (u, err) => events.manifestURLRejected(u, err),
    fetch: async () => new Response('not: [a pod', { status: 200 }),
  });
  await assert.rejects(source.extractFromURL());
  await source.extractFromURL(); // the same body is not parsed (nor reported) again
  assert.equal(recorded.length, 1, 'once per body');
  assert.equal(recorded[0]!.reason, 'FailedDecodeStaticPod');
  assert.deepEqual(recorded[0]!.object, NODE_REF);
  assert.ok(recorded[0]!.message.startsWith('Static pods from manifest URL "https://config.example.com/pods.yaml" ignored: '), recorded[0]!.message);
  assert.doesNotMatch(recorded[0]!.message, /s3cret|pass|token/);
});

describe('createStaticPodEvents: a node\'s size', () => {
  it('holds its recorder, Node reference and mirror lookup, with no closure of its own per node', async () => {
    const recorder: Pick<EventRecorder, 'event'> = { event: () => undefined };
    const getMirrorPod = (): Pod | undefined => undefined;
    // The node name is made per node, as a fleet's are; recorder and lookup are shared here so
    // that only what the events object holds of its own is counted.
    const bytes = await retainedBytesPer(20_000, (i) => createStaticPodEvents({ recorder, nodeName: `node-${i}`, getMirrorPod }));
    assert.ok(bytes < 200, `${bytes.toFixed(1)} bytes per node`);
  });
});
