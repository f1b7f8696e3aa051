// Agent crash: the `kubelet-pods run` process is killed with SIGKILL at random points while it
// mirrors a few hundred static pods, and started again each time; between runs the manifests
// change, and each run also sees a few changes itself, so that it is killed with terminations
// and waiting starts in flight. The end state is exact: one mirror per static pod, matching
// hashes and images, no orphans, and no mirror ever duplicated.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useControlPlane } from '../helpers/control-plane.js';
import { LogCapture, ManifestDir, SCALE, TerminationWatch, convergeExactly, pick, podsOnNode, prng, seedFromEnv, tokensOf, MIRROR } from './helpers.js';
import { waitFor } from '../helpers/wait.js';
import { SIMULATION_ANNOTATIONS } from '../../src/runtime/simulation-annotations.js';

const NODE = 'rel-crash';
// The terminations-in-flight case runs on a node of its own.
const TERM_NODE = 'rel-crash-term';
const cp = useControlPlane({ nodes: [NODE, TERM_NODE] });
const logs = new LogCapture('crash');
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

const PODS = pick(200, 500);
const KILLS = pick(4, 10);

function startAgentProcess(dir: string, run: number | string, node = NODE, watch?: TerminationWatch): ChildProcess {
  const child = spawn(
    process.execPath,
    [cli, 'run', '--kubeconfig', cp.cluster.nodeKubeconfigs[node]!, '--hostname-override', node, '--pod-manifest-path', dir, '--healthz-port', '0', '--read-only-port', '0', '--port', '0'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  children.push(child);
  // Every line the process logs (JSON on stderr) goes to the captured log.
  child.stderr!.pipe(logs.stream(`agent-run-${run}`));
  if (watch !== undefined) child.stderr!.on('data', (chunk: Buffer) => watch.feed(chunk.toString('utf8')));
  return child;
}

it(`agent crash (${SCALE}): ${KILLS} SIGKILLs at random points while ${PODS} static pods are mirrored`, async (t) => {
  const rnd = prng(seedFromEnv());
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-crash-'));
  const manifests = new ManifestDir(dir, cp.namespace, 'c');
  await manifests.add(PODS);

  const killedAt: number[] = [];
  let maxDuplicates = 0;
  for (let run = 0; run < KILLS; run++) {
    const child = startAgentProcess(dir, run);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // A random point: after a random number of mirrors changed since the start of this run
    // (or a random delay, for kills before the agent has done anything).
    const before = (await podsOnNode(cp.adminApi, NODE)).length;
    // Changes the running agent sees, so that the kill finds pods terminating and edited pods
    // waiting for their start retry (10–15 s under the kubelet lifecycle, the default).
    await manifests.change(rnd, 2, `nginx:1.${60 + run}`);
    const delayMs = rnd.int(3000);
    const t0 = Date.now();
    for (;;) {
      const pods = await podsOnNode(cp.adminApi, NODE);
      const names = pods.filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined).map((p) => p.metadata!.name!);
      maxDuplicates = Math.max(maxDuplicates, names.length - new Set(names).size);
      if (Date.now() - t0 >= delayMs || Math.abs(pods.length - before) >= rnd.int(PODS)) break;
      if (Date.now() - t0 > 30_000) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    killedAt.push(Date.now() - t0);
    // While it is dead: edits, removals and additions.
    await manifests.change(rnd, 5, `nginx:1.${28 + run}`);
  }

  const last = startAgentProcess(dir, KILLS);
  const convergeMs = await convergeExactly(cp.adminApi, NODE, manifests.expected(NODE), 120_000);
  const mirrors = (await podsOnNode(cp.adminApi, NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  assert.equal(mirrors.length, manifests.images.size);
  assert.equal(maxDuplicates, 0, 'a mirror name never appeared twice');
  last.kill('SIGTERM');
  const code = await new Promise((resolve) => last.once('exit', resolve));
  assert.equal(code, 0, 'clean exit on SIGTERM after the crashes');
  t.diagnostic(
    `seed ${rnd.seed}: ${KILLS} SIGKILLs (at ${killedAt.join(', ')} ms into each run), ${manifests.images.size} static pods at the end ` +
      `(${manifests.created} created, ${manifests.created - manifests.images.size} removed); ${mirrors.length} mirrors, 0 duplicated, 0 lost, 0 orphans; ` +
      `the last start converged in ${Math.round(convergeMs)} ms`,
  );
  const lines = await logs.assertNoSecrets(tokensOf([cp.cluster.nodeKubeconfigs[NODE]!, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});

// Static pods that take seconds to stop (grace 8 s, each container exiting 5 s after SIGTERM),
// so that the agent is killed while the pods it removes and replaces are still stopping: the
// restarted agent knows nothing of those terminations and must still end exact, each mirror
// with its manifest's hash and the final status of a running pod.
const TERM_PODS = pick(20, 60);
const TERM_KILLS = pick(2, 5);
const STOPPING = { terminationGracePeriodSeconds: 8, annotations: { [SIMULATION_ANNOTATIONS.stopSeconds]: '5' } };

it(`agent crash (${SCALE}): ${TERM_KILLS} SIGKILLs each while static pods with a 5 s stop are terminating`, async (t) => {
  const rnd = prng(seedFromEnv());
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-crash-term-'));
  const manifests = new ManifestDir(dir, cp.namespace, 't', STOPPING);
  await manifests.add(TERM_PODS);
  const inFlightAtKill: number[] = [];
  for (let run = 0; run < TERM_KILLS; run++) {
    const watch = new TerminationWatch();
    const child = startAgentProcess(dir, `term-${run}`, TERM_NODE, watch);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Every run starts from the exact state, so that what it is killed in is stopping pods.
    await convergeExactly(cp.adminApi, TERM_NODE, manifests.expected(TERM_NODE), 90_000, { final: true });
    // Edits (the old pod stops, the new one waits for the name) and removals; a few new pods.
    await manifests.change(rnd, 3, `nginx:1.${70 + run}`);
    await waitFor(() => watch.inFlight >= 3 || undefined, 'at least 3 terminations in flight', { timeoutMs: 20_000, intervalMs: 10 });
    inFlightAtKill.push(watch.inFlight);
    child.kill('SIGKILL');
    await exited;
    assert.ok(inFlightAtKill.at(-1)! >= 3, 'killed while pods were stopping');
  }
  const last = startAgentProcess(dir, `term-${TERM_KILLS}`, TERM_NODE);
  const convergeMs = await convergeExactly(cp.adminApi, TERM_NODE, manifests.expected(TERM_NODE), 90_000, { final: true });
  const mirrors = (await podsOnNode(cp.adminApi, TERM_NODE)).filter((p) => p.metadata?.annotations?.[MIRROR] !== undefined);
  assert.equal(mirrors.length, manifests.images.size, 'one mirror per static pod, none left of the removed ones');
  last.kill('SIGTERM');
  assert.equal(await new Promise((resolve) => last.once('exit', resolve)), 0, 'clean exit on SIGTERM');
  t.diagnostic(
    `seed ${rnd.seed}: ${TERM_KILLS} SIGKILLs with ${inFlightAtKill.join(', ')} terminations in flight; ${manifests.images.size} static pods at the end ` +
      `(${manifests.created} created); ${mirrors.length} mirrors, exact, all Running and Ready; the last start converged in ${Math.round(convergeMs)} ms`,
  );
  const lines = await logs.assertNoSecrets(tokensOf([cp.cluster.nodeKubeconfigs[TERM_NODE]!, cp.cluster.adminKubeconfig]));
  t.diagnostic(`log scan: ${lines} lines, no token`);
});
