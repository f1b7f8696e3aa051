// Counterpart of pkg/kubelet/types/pod_update_test.go (PM-12…PM-15), the IsMirrorPodOf case of
// pkg/kubelet/pod/pod_manager_test.go (PM-9) and TestParsePodFullName of
// pkg/kubelet/pod/mirror_client_test.go (MC-1), for src/pod/classify.ts.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  API_SERVER_SOURCE,
  CONFIG_HASH_ANNOTATION_KEY,
  CONFIG_MIRROR_ANNOTATION_KEY,
  CONFIG_SOURCE_ANNOTATION_KEY,
  FILE_SOURCE,
  HTTP_SOURCE,
} from '../../../src/constants.js';
import { hasErrorCode } from '../../../src/errors.js';
import {
  buildPodFullName,
  getPodFullName,
  getPodSource,
  getValidatedSources,
  isCriticalPod,
  isMirrorPod,
  isMirrorPodOf,
  isStaticPod,
  parsePodFullName,
} from '../../../src/pod/classify.js';
import type { Pod } from '../../../src/pod/types.js';
import { newPod, ns } from './pod-fixtures.js';

function podWithAnnotations(annotations?: Record<string, string>): Pod {
  return { metadata: { name: 'foo', namespace: 'default', uid: 'foo-uid', ...(annotations ? { annotations } : {}) } };
}

describe('PM-9 TestIsMirrorPodOf', () => {
  const pod = newPod('123456789', 'bar', ns, 'static', { hash: 'test' });
  const cases = [
    { desc: 'is mirror', mirror: newPod('987654321', 'bar', ns, 'mirror', { mirrorValue: 'test' }), expected: true },
    {
      desc: 'different annotation',
      mirror: newPod('987654321', 'bar', ns, 'mirror', { mirrorValue: 'test2' }),
      expected: false,
    },
    { desc: 'different name', mirror: newPod('987654321', 'baz', ns, 'mirror', { mirrorValue: 'test' }), expected: false },
    {
      desc: 'different namespace',
      mirror: newPod('987654321', 'bar', 'other', 'mirror', { mirrorValue: 'test' }),
      expected: false,
    },
    { desc: 'no mirror annotation', mirror: newPod('987654321', 'bar', ns, 'extra', { hash: 'test' }), expected: false },
  ];
  for (const { desc, mirror, expected } of cases) {
    test(`PM-9 TestIsMirrorPodOf/${desc}`, () => {
      assert.equal(isMirrorPodOf(mirror, pod), expected);
    });
  }
  test('PM-9 TestIsMirrorPodOf/pod without hash matches a mirror annotated ""', () => {
    const unhashed = newPod('1', 'bar', ns, 'static');
    assert.equal(isMirrorPodOf(newPod('2', 'bar', ns, 'mirror', { mirrorValue: '' }), unhashed), true);
    assert.equal(isMirrorPodOf(newPod('2', 'bar', ns, 'mirror', { mirrorValue: 'x' }), unhashed), false);
  });
  // Found by the Go oracle (test/integration/pod-manager-oracle.test.ts): Go decodes a missing
  // name or namespace as "", so the kubelet pairs these pods, and so does our pod manager.
  const mirrorAnnotations = { [CONFIG_SOURCE_ANNOTATION_KEY]: API_SERVER_SOURCE, [CONFIG_MIRROR_ANNOTATION_KEY]: 'h' };
  const staticAnnotations = { [CONFIG_SOURCE_ANNOTATION_KEY]: FILE_SOURCE, [CONFIG_HASH_ANNOTATION_KEY]: 'h' };
  const absentVsEmpty = [
    { desc: 'namespace absent on the pod, "" on the mirror', pod: { name: 'bar' }, mirror: { name: 'bar', namespace: '' } },
    { desc: 'namespace "" on the pod, absent on the mirror', pod: { name: 'bar', namespace: '' }, mirror: { name: 'bar' } },
    { desc: 'name absent on the mirror, "" on the pod', pod: { name: '', namespace: ns }, mirror: { namespace: ns } },
    { desc: 'name null on the mirror, absent on the pod', pod: { namespace: ns }, mirror: { name: null, namespace: ns } },
    { desc: 'both absent on both sides', pod: {}, mirror: {} },
  ];
  for (const { desc, pod: podMeta, mirror: mirrorMeta } of absentVsEmpty) {
    test(`PM-9 TestIsMirrorPodOf/absent equals "": ${desc}`, () => {
      const staticPod = { metadata: { ...podMeta, annotations: staticAnnotations } } as Pod;
      const mirror = { metadata: { ...mirrorMeta, annotations: mirrorAnnotations } } as Pod;
      assert.equal(isMirrorPodOf(mirror, staticPod), true);
      // Still false when the names really differ or the hash does not match.
      assert.equal(isMirrorPodOf({ metadata: { ...mirrorMeta, name: 'other', annotations: mirrorAnnotations } } as Pod, staticPod), false);
      const rehashed = { metadata: { ...mirrorMeta, annotations: { ...mirrorAnnotations, [CONFIG_MIRROR_ANNOTATION_KEY]: 'h2' } } } as Pod;
      assert.equal(isMirrorPodOf(rehashed, staticPod), false);
    });
  }
});

describe('PM-12 TestIsMirrorPod', () => {
  test('PM-12 TestIsMirrorPod/mirror annotation present', () => {
    assert.equal(isMirrorPod(podWithAnnotations({ [CONFIG_MIRROR_ANNOTATION_KEY]: 'true' })), true);
  });
  test('PM-12 TestIsMirrorPod/no annotations', () => {
    assert.equal(isMirrorPod(podWithAnnotations()), false);
  });
  test('PM-12 TestIsMirrorPod/empty mirror annotation value still counts', () => {
    assert.equal(isMirrorPod(podWithAnnotations({ [CONFIG_MIRROR_ANNOTATION_KEY]: '' })), true);
    assert.equal(isMirrorPod(podWithAnnotations({ [CONFIG_SOURCE_ANNOTATION_KEY]: API_SERVER_SOURCE })), false);
  });
});

describe('PM-13 TestIsStaticPod', () => {
  const cases = [
    { desc: 'file source', source: FILE_SOURCE, expected: true },
    { desc: 'http source', source: HTTP_SOURCE, expected: true },
    { desc: 'api source', source: API_SERVER_SOURCE, expected: false },
    { desc: 'empty source is static', source: '', expected: true },
  ];
  for (const { desc, source, expected } of cases) {
    test(`PM-13 TestIsStaticPod/${desc}`, () => {
      assert.equal(isStaticPod(podWithAnnotations({ [CONFIG_SOURCE_ANNOTATION_KEY]: source })), expected);
    });
  }
  test('PM-13 TestIsStaticPod/no annotations is not static', () => {
    assert.equal(isStaticPod(podWithAnnotations()), false);
  });
  test('PM-13 TestIsStaticPod/a mirror stamped api is not static', () => {
    assert.equal(isStaticPod(newPod('m', 'bar', ns, 'mirror')), false);
  });
});

describe('PM-14 TestGetPodSource', () => {
  test('PM-14 TestGetPodSource/cannot get pod source', () => {
    assert.throws(
      () => getPodSource(podWithAnnotations()),
      (err: unknown) => hasErrorCode(err, 'KP_ERR_POD_SOURCE') && err.message.includes('"foo-uid"'),
    );
  });
  test('PM-14 TestGetPodSource/valid annotation', () => {
    assert.equal(getPodSource(podWithAnnotations({ [CONFIG_SOURCE_ANNOTATION_KEY]: 'host-ipc-sources' })), 'host-ipc-sources');
  });
  test('PM-14 TestGetPodSource/empty value counts as present', () => {
    assert.equal(getPodSource(podWithAnnotations({ [CONFIG_SOURCE_ANNOTATION_KEY]: '' })), '');
  });
});

describe('PM-15 TestGetValidatedSources', () => {
  test('PM-15 TestGetValidatedSources/empty string', () => {
    assert.deepEqual(getValidatedSources(['']), []);
  });
  test('PM-15 TestGetValidatedSources/file and apiserver', () => {
    assert.deepEqual(getValidatedSources([FILE_SOURCE, API_SERVER_SOURCE]), [FILE_SOURCE, API_SERVER_SOURCE]);
  });
  test('PM-15 TestGetValidatedSources/all sources', () => {
    assert.deepEqual(getValidatedSources(['*']), [FILE_SOURCE, HTTP_SOURCE, API_SERVER_SOURCE]);
  });
  test('PM-15 TestGetValidatedSources/unknown source', () => {
    assert.throws(
      () => getValidatedSources(['unknown']),
      (err: unknown) => hasErrorCode(err, 'KP_ERR_SOURCE_UNKNOWN') && err.message === 'unknown pod source "unknown"',
    );
  });
  test('PM-15 TestGetValidatedSources/"*" anywhere wins, duplicates kept otherwise', () => {
    assert.deepEqual(getValidatedSources([FILE_SOURCE, '*']), [FILE_SOURCE, HTTP_SOURCE, API_SERVER_SOURCE]);
    assert.deepEqual(getValidatedSources([HTTP_SOURCE, '', HTTP_SOURCE]), [HTTP_SOURCE, HTTP_SOURCE]);
  });
});

describe('MC-1 TestParsePodFullName', () => {
  const good = [
    { input: 'bar_foo', name: 'bar', namespace: 'foo' },
    { input: 'bar.org_foo.com', name: 'bar.org', namespace: 'foo.com' },
    { input: 'bar-bar_foo', name: 'bar-bar', namespace: 'foo' },
  ];
  for (const { input, name, namespace } of good) {
    test(`MC-1 TestParsePodFullName/${input}`, () => {
      assert.deepEqual(parsePodFullName(input), { name, namespace });
    });
  }
  for (const input of ['barfoo', 'bar_foo_foo', '', 'bar_', '_foo']) {
    test(`MC-1 TestParsePodFullName/${JSON.stringify(input)} fails`, () => {
      assert.throws(
        () => parsePodFullName(input),
        (err: unknown) =>
          hasErrorCode(err, 'KP_ERR_POD_FULL_NAME') &&
          err.message === `failed to parse the pod full name ${JSON.stringify(input)}`,
      );
    });
  }
  test('full names round-trip through getPodFullName and buildPodFullName', () => {
    assert.equal(getPodFullName(newPod('u', 'bar', 'foo', 'extra')), 'bar_foo');
    assert.equal(buildPodFullName('bar', 'foo'), 'bar_foo');
    assert.equal(getPodFullName({ metadata: {} }), '_');
  });
});

describe('TestIsCriticalPod', () => {
  const cases = [
    { desc: 'static pod', pod: newPod('s', 'bar', ns, 'static'), expected: true },
    { desc: 'mirror pod', pod: newPod('m', 'bar', ns, 'mirror'), expected: true },
    { desc: 'api pod without priority', pod: newPod('a', 'bar', ns, 'extra'), expected: false },
    {
      desc: 'api pod at system-critical priority',
      pod: { ...newPod('a', 'bar', ns, 'extra'), spec: { containers: [], priority: 2_000_000_000 } },
      expected: true,
    },
    {
      desc: 'api pod just below system-critical priority',
      pod: { ...newPod('a', 'bar', ns, 'extra'), spec: { containers: [], priority: 1_999_999_999 } },
      expected: false,
    },
    { desc: 'pod without annotations', pod: newPod('p', 'bar', ns, 'plain'), expected: false },
  ];
  for (const { desc, pod, expected } of cases) {
    test(`TestIsCriticalPod/${desc}`, () => {
      assert.equal(isCriticalPod(pod), expected);
    });
  }
});
