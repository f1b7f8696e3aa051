// When a runtime change reaches the mirror's status, wired as src/agent/agent.ts wires it: under
// the kubelet lifecycle through the relist (src/agent/relist.ts), the pod workers and their
// syncs, so at the first relist after the change; under `instant` straight from the runtime.
// Real simulated runtime, pod manager, lifecycle, workers and status writer; a recording
// status PATCH; the FakeClock.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodOperation } from '../../../src/constants.js';
import { createPodLifecycle } from '../../../src/agent/pod-lifecycle.js';
import { createPodWorkers, type PodWorkers } from '../../../src/agent/pod-workers.js';
import { createRelist, statusThroughSyncs } from '../../../src/agent/relist.js';
import { CONFIG_MIRROR_ANNOTATION_KEY, CONFIG_SOURCE_ANNOTATION_KEY } from '../../../src/constants.js';
import { PodManager } from '../../../src/pod/manager.js';
import type { Pod } from '../../../src/pod/types.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { createMirrorStatusWriter, type PodStatusApi } from '../../../src/status/mirror-status-writer.js';
import { FakeClock } from '../../../src/time/fake-clock.js';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const staticPod: Pod = {
  metadata: { name: 'web-node', namespace: 'default', uid: 's1', annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'file', 'kubernetes.io/config.hash': 's1' } },
  spec: { nodeName: 'node', restartPolicy: 'Never', containers: [{ name: 'app', image: 'nginx' }] },
};
const mirror: Pod = {
  metadata: { name: 'web-node', namespace: 'default', uid: 'm1', annotations: { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api', [CONFIG_MIRROR_ANNOTATION_KEY]: 's1' } },
  spec: { nodeName: 'node', restartPolicy: 'Never', containers: [{ name: 'app', image: 'nginx' }] },
  status: { phase: 'Pending' },
};

/** When (monotonic ms) each phase was first written to the mirror. */
async function phaseTimes(lifecycle: 'kubelet' | 'instant'): Promise<Record<string, number>> {
  const clock = new FakeClock();
  const runtime = createSimulatedStatusProvider({ clock, startDelayMs: 1000 });
  const podManager = new PodManager();
  const written: Record<string, number> = {};
  const api: PodStatusApi = {
    patchNamespacedPodStatus: async (param) => {
      const phase = (param.body as { status?: { phase?: string } }).status?.phase;
      if (phase !== undefined) written[phase] ??= clock.monotonic();
      return {};
    },
    // The watch's copy here is always the one a write went over: never read.
    readNamespacedPod: () => Promise.reject(new Error('no read expected')),
  };
  const relist = lifecycle === 'kubelet' ? createRelist({ clock, periodMs: 1000 }) : undefined;
  const writer = createMirrorStatusWriter({ podManager, statusProvider: relist ? statusThroughSyncs(runtime) : runtime, api, clock, logger: quiet });
  let workers: PodWorkers | undefined;
  const podLifecycle = createPodLifecycle({
    podManager,
    admission: { admitNew: () => {}, forget: () => {}, rejection: () => undefined },
    sourcesReady: { allReady: () => true },
    workers: relist ? () => workers! : undefined,
    runtime,
    mirrorSync: undefined,
    statusWriter: writer,
    deletePod: undefined,
    metrics: { setWorkingPods() {}, setDesiredPods() {}, setActivePods() {}, setMirrorPods() {}, recordRestartedPod() {} },
    clock,
    logger: quiet,
  });
  if (relist) {
    workers = createPodWorkers({ terminate: (pod, grace) => runtime.terminate(pod, grace), ...podLifecycle.workerHooks, relist, clock });
    relist.onChanges((uids) => podLifecycle.onRelist(uids));
    runtime.onChange((uid) => relist.runtimeChanged(uid));
  }
  writer.start();
  await clock.advance(300);
  podManager.addPod(staticPod);
  podManager.addPod(mirror);
  podLifecycle.onPodsChanged([staticPod, mirror], PodOperation.ADD);
  await clock.advance(5000);
  // The container exits with 1 (restartPolicy Never: the pod fails).
  runtime.exitContainer('s1', 'app', 1);
  await clock.advance(3000);
  await workers?.stop();
  relist?.stop();
  await writer.stop();
  runtime.stop();
  return written;
}

describe('when a runtime change reaches the status', () => {
  it('kubelet lifecycle: at the first relist after it (the runtime started the pod at 1.3 s, its container failed at 5.3 s)', async () => {
    assert.deepEqual(await phaseTimes('kubelet'), { Pending: 300, Running: 2000, Failed: 6000 });
  });

  it('instant lifecycle: at once', async () => {
    assert.deepEqual(await phaseTimes('instant'), { Pending: 300, Running: 1300, Failed: 5300 });
  });
});
