// Fleet replicas sharing nodes by Lease (docs/fleet.md, "Several replicas"), as users run them:
// three `kubelet-pods fleet --shard-by-lease` processes (the CLI from dist/) over 50 nodes (CI;
// 300 with RELIABILITY_SCALE=full or FLEET_SHARD_NODES=300) with static pods. Once every node is
// Ready with exactly its mirrors, one process is SIGKILLed; its nodes must be taken over within
// the Lease duration plus one claim interval, and no mirror lost or duplicated. The killed
// replica is then started again with the same identity: it takes nothing back (no rebalancing).
// Then another replica is stopped (SIGSTOP) past its Leases' duration while a manifest changes:
// the others take its nodes over, and once it runs again it writes none of them (fencing).
// Every write is attributed from the API server's audit log (each replica's User-Agent names
// it), and for every node its writer changes only across a Lease handover: the new writer's
// first write is its taking of the expired Lease, after the old writer's last write was answered.
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { V1Lease } from '@kubernetes/client-node';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { issueFleetToken } from '../../src/fleet/fleet-identity.js';
import { readAuditLog, succeeded, writeAuditPolicy } from '../helpers/audit-log.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { checkNodeWriters, nodeObject, nodeWrite, type NodeWrite } from '../helpers/node-writers.js';
import { waitFor } from '../helpers/wait.js';
import { LogCapture, ManifestDir, SCALE, diffMirrors, pick, tokensOf } from './helpers.js';

const NODES = Number(process.env.FLEET_SHARD_NODES ?? pick(50, 300));
const PODS = 2;
const REPLICAS = ['r0', 'r1', 'r2'];
const VICTIM = 'r1';
const STALLED = 'r2';
const RESTARTED = `${VICTIM} (restarted)`;
/** The node Lease's duration and the claim interval with its 10 % jitter (src/fleet/lease-shards.ts). */
const LEASE_MS = 40_000;
const CLAIM_MS = 11_000;
/** Room for a loaded 2-core machine (API server, etcd and three fleets) on top of the bound. */
const SLACK_MS = 4_000;
const PREFIX = 'fr-';
// The fleet's User-Agent ends with its replica's identity (src/fleet/fleet.ts, fleetUserAgent).
const UA = /^kubelet\/\S+ \(\S+\) kubelet-pods\/fleet \(replica (.+)\)$/;

const cp = useControlPlane({ nodes: ['fr-unused'], auditPolicyFile: writeAuditPolicy() });
const logs = new LogCapture('fleet-replicas');
const cli = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

interface Replica {
  child: ChildProcess;
  exited: Promise<number | null>;
}

function startReplica(id: string, run: number, kubeconfig: string, manifestDir: string): Replica {
  const args = ['fleet', '--nodes', String(NODES), '--node-name-prefix', PREFIX, '--kubeconfig', kubeconfig, '--pod-manifest-path', manifestDir, '--shard-by-lease', id, '--read-only-port', '0'];
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const log = logs.stream(`${id}-run${run}`);
  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  return { child, exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

it(`fleet replicas (${SCALE}): 3 processes over ${NODES} nodes × ${PODS} static pods, one SIGKILLed and restarted; one writer per node at a time`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kp-rel-replicas-'));
  const manifestDir = await mkdtemp(join(dir, 'm-'));
  const pods = new ManifestDir(manifestDir, cp.namespace, 'fw');
  await pods.add(PODS);
  const kubeconfig = await issueFleetToken({ adminKubeconfig: cp.cluster.adminKubeconfig, out: join(dir, 'fleet.kubeconfig') });
  const nodes = Array.from({ length: NODES }, (_, i) => `${PREFIX}${i}`);
  const leasesApi = kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api);
  const holders = async (): Promise<Map<string, string>> => {
    const items: V1Lease[] = (await leasesApi.listNamespacedLease({ namespace: 'kube-node-lease' })).items;
    return new Map(items.filter((l) => l.metadata?.name?.startsWith(PREFIX)).map((l) => [l.metadata!.name!, l.spec?.holderIdentity ?? '']));
  };
  /** '' when every node is Ready and has exactly its mirrors, else what is missing. */
  const converged = async (): Promise<string> => {
    const readyNodes = (await cp.adminApi.listNode()).items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    const ready = new Set(readyNodes.map((n) => n.metadata?.name));
    const notReady = nodes.filter((n) => !ready.has(n));
    if (notReady.length > 0) return `${notReady.length} nodes not Ready (${notReady.slice(0, 3).join(', ')})`;
    const all = (await cp.adminApi.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' })).items;
    const running = all.filter((p) => p.status?.phase === 'Running').length;
    if (running !== NODES * PODS) return `${running} of ${NODES * PODS} mirrors Running`;
    for (const node of nodes) {
      const diff = diffMirrors(all.filter((p) => p.spec?.nodeName === node), pods.expected(node));
      if (diff !== '') return `${node}: ${diff}`;
    }
    return '';
  };
  const waitConverged = async (what: string, timeoutMs: number): Promise<number> => {
    const started = Date.now();
    let last = '';
    await waitFor(async () => (last = await converged()) === '', `${what} (last: ${last})`, { timeoutMs, intervalMs: 500 }).catch((err: Error) => {
      throw new Error(`${err.message}; last: ${last}`);
    });
    return Date.now() - started;
  };

  // Started together, as the replicas of a Deployment are.
  const replicas = new Map(REPLICAS.map((id) => [id, startReplica(id, 1, kubeconfig, manifestDir)]));
  const convergeMs = await waitConverged('every node Ready with exactly its mirrors', pick(120_000, 300_000));
  const before = await holders();
  assert.equal(before.size, NODES, 'one Lease per node');
  for (const id of REPLICAS) assert.ok([...before.values()].includes(id), `${id} holds no node`);
  const orphaned = nodes.filter((n) => before.get(n) === VICTIM);

  // SIGKILL: no stop, no release; the victim's Leases are left to expire.
  const killedAt = Date.now();
  replicas.get(VICTIM)!.child.kill('SIGKILL');
  await replicas.get(VICTIM)!.exited;
  await waitFor(
    async () => {
      const now = await holders();
      return orphaned.every((n) => REPLICAS.includes(now.get(n) ?? '') && now.get(n) !== VICTIM);
    },
    `${VICTIM}'s ${orphaned.length} nodes taken over`,
    { timeoutMs: LEASE_MS + CLAIM_MS + SLACK_MS + 10_000, intervalMs: 200 },
  );
  const takenOverMs = Date.now() - killedAt;

  // The same identity again: every Lease it held is now another replica's, so it runs nothing.
  const restartedAt = Date.now();
  const restarted = startReplica(VICTIM, 2, kubeconfig, manifestDir);
  const reconvergeMs = await waitConverged('every node Ready with exactly its mirrors after the takeover', 90_000);
  // Once it runs, every node is tried within one claim interval: give it that and a bit more.
  await waitFor(() => readFileSync(logs.file(`${VICTIM}-run2`), 'utf8').includes('"fleet started"'), `the restarted ${VICTIM} started`, { timeoutMs: 60_000, intervalMs: 200 });
  await delay(CLAIM_MS + 2_000);
  const later = await holders();
  for (const n of nodes) if (before.get(n) !== VICTIM) assert.equal(later.get(n), before.get(n), `${n} changed hands without cause`);
  assert.ok(![...later.values()].includes(VICTIM), `the restarted ${VICTIM} took a node back`);

  // A replica that stalls (SIGSTOP) past its Leases' duration while a manifest changes: the
  // others (the restarted one too) take its nodes and replace the mirror; once it runs again it
  // must not write those nodes (its fence: src/fleet/lease-fence.ts) and gives them up at its
  // next renewal.
  const stalledNodes = nodes.filter((n) => later.get(n) === STALLED);
  const stalledAt = Date.now();
  replicas.get(STALLED)!.child.kill('SIGSTOP');
  await pods.write(pods.images.keys().next().value!, 'nginx:1.28');
  await waitFor(
    async () => {
      const now = await holders();
      return stalledNodes.every((n) => now.get(n) !== STALLED);
    },
    `${STALLED}'s ${stalledNodes.length} nodes taken over while it is stopped`,
    { timeoutMs: LEASE_MS + CLAIM_MS + SLACK_MS + 10_000, intervalMs: 200 },
  );
  const changedMs = await waitConverged('every node Ready with the changed mirror', 90_000);
  const resumedAt = Date.now();
  replicas.get(STALLED)!.child.kill('SIGCONT');
  // Its overdue renewals run at once and find the Leases held by others; a renew period more
  // gives whatever else it would write time to show in the audit log.
  await delay(CLAIM_MS);
  const final = await holders();
  assert.ok(![...final.values()].includes(STALLED), `${STALLED} took a node back after it resumed`);
  assert.equal(await converged(), '', 'every node still exact after the stalled replica resumed');

  // A clean stop of every process, so that the audit log holds every write.
  const running = [replicas.get('r0')!, replicas.get(STALLED)!, restarted];
  for (const r of running) r.child.kill('SIGTERM');
  assert.deepEqual(await Promise.all(running.map((r) => r.exited)), [0, 0, 0], 'each replica exits 0 on SIGTERM');
  await delay(500);

  // Every successful write of a replica, tied to its node and to the process that made it.
  const names = { nodes: new Set(nodes), staticPods: [...pods.images.keys()] };
  const writes: NodeWrite[] = [];
  const unplaced: string[] = [];
  const byAuthor = new Map<string, number>();
  const byKind = new Map<string, number>();
  let mirrorCreates = 0;
  let podDeletes = 0;
  for (const e of readAuditLog(cp.cluster.auditLogFile!)) {
    const id = UA.exec(e.userAgent ?? '')?.[1];
    if (id === undefined || !succeeded(e)) continue;
    const author = id === VICTIM && Date.parse(e.requestReceivedTimestamp) >= restartedAt ? RESTARTED : id;
    byAuthor.set(author, (byAuthor.get(author) ?? 0) + 1);
    const at = nodeObject(e, names);
    if (at === undefined) {
      unplaced.push(`${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}`);
      continue;
    }
    byKind.set(at.kind, (byKind.get(at.kind) ?? 0) + 1);
    if (at.kind === 'pod' && e.verb === 'create') mirrorCreates++;
    if (at.kind === 'pod' && e.verb === 'delete') podDeletes++;
    writes.push(nodeWrite(e, { author, identity: id }, at));
  }
  assert.deepEqual(unplaced.slice(0, 5), [], 'every write of a replica belongs to one of its nodes');
  const report = checkNodeWriters(writes);
  assert.deepEqual(report.problems.slice(0, 10), [], `${report.problems.length} broken rules`);
  // Each node's writers are exactly its Lease holders in turn (the restarted replica's after the stall).
  for (const n of nodes) {
    const chain = [before.get(n), later.get(n), final.get(n) === VICTIM ? RESTARTED : final.get(n)];
    const expected = chain.filter((h, i) => i === 0 || h !== chain[i - 1]);
    assert.deepEqual(report.writers.get(n), expected, `${n}: its writers`);
  }
  const restartedEarly = writes.filter((w) => w.author === RESTARTED && w.start < stalledAt * 1000).length;
  assert.equal(restartedEarly, 0, `the restarted ${VICTIM} wrote nothing before ${STALLED} stalled (no rebalancing)`);
  const stalledLate = writes.filter((w) => w.author === STALLED && w.start >= resumedAt * 1000).length;
  assert.equal(stalledLate, 0, `${STALLED} wrote nothing after it resumed`);
  // The changed manifest replaced one mirror per node, once; nothing else was deleted or created.
  assert.equal(mirrorCreates, NODES * (PODS + 1), 'each mirror created once, the changed one twice: none lost and created again');
  assert.equal(podDeletes, NODES, 'only the changed mirror deleted, once per node');

  // Takeover times from the audit log: the new holder's taking of the Lease, after the kill
  // and after the victim's last renewal of that node.
  const fromKill = report.handovers.filter((h) => h.from === VICTIM).map((h) => (h.at - killedAt * 1000) / 1000).sort((a, b) => a - b);
  const fromStall = report.handovers.filter((h) => h.from === STALLED).map((h) => (h.at - stalledAt * 1000) / 1000).sort((a, b) => a - b);
  const fromRenewal = report.handovers.map((h) => (h.at - (h.expiredAt - LEASE_MS * 1000)) / 1000);
  const gaps = report.handovers.map((h) => (h.at - h.previousLastEnd) / 1000);
  assert.equal(fromKill.length, orphaned.length);
  assert.equal(fromStall.length, stalledNodes.length);
  assert.ok(Math.max(...fromRenewal) <= LEASE_MS + CLAIM_MS + SLACK_MS, `a node taken ${Math.max(...fromRenewal)} ms after its last renewal`);
  assert.ok(fromKill.at(-1)! <= LEASE_MS + CLAIM_MS + SLACK_MS, `a node taken ${fromKill.at(-1)} ms after the kill`);
  assert.ok(fromStall.at(-1)! <= LEASE_MS + CLAIM_MS + SLACK_MS, `a node taken ${fromStall.at(-1)} ms after the stall`);

  const lines = await logs.assertNoSecrets(tokensOf([kubeconfig, cp.cluster.adminKubeconfig]));
  const ms = (x: number): string => `${(x / 1000).toFixed(1)} s`;
  t.diagnostic(`converged in ${ms(convergeMs)}; holders ${REPLICAS.map((id) => `${id}=${[...before.values()].filter((h) => h === id).length}`).join(' ')}`);
  t.diagnostic(`SIGKILL ${VICTIM}: its ${orphaned.length} nodes taken over after ${ms(fromKill[0]!)} … ${ms(fromKill.at(-1)!)} (median ${ms(fromKill[Math.floor(fromKill.length / 2)]!)}; all Leases seen moved at ${ms(takenOverMs)}); at most ${ms(Math.max(...fromRenewal))} after a node's last renewal; bound ${ms(LEASE_MS + CLAIM_MS)}`);
  t.diagnostic(`SIGSTOP ${STALLED} and a manifest changed: its ${stalledNodes.length} nodes taken over after ${ms(fromStall[0]!)} … ${ms(fromStall.at(-1)!)}, all mirrors changed ${ms(changedMs)} later; after SIGCONT it wrote none of them`);
  t.diagnostic(`quiet gap at each handover (old writer's last answer → new writer's Lease): min ${ms(Math.min(...gaps))}; converged again ${ms(reconvergeMs)} after the takeover`);
  t.diagnostic(`${writes.length} node writes (${[...byAuthor].map(([a, n]) => `${a}: ${n}`).join(', ')}; ${[...byKind].map(([k, n]) => `${k}: ${n}`).join(', ')}), ${mirrorCreates} mirror creates, ${podDeletes} deletes, ${report.handovers.length} handovers, 0 overlaps; ${lines} log lines scanned`);
});
