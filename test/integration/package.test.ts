// `npm pack` ships a working package: another project can install it, import each entry point
// (`kubelet-pods`, `/sources`, `/agent`, `/testing`) and its types by the package name, use
// them, build the local control plane from the shipped Go sources, and run the command. The
// runtime exports of each entry point are pinned, so that the public surface only changes on
// purpose.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { controlPlaneSourceHash } from '../../src/cluster/control-plane-build.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = join(root, 'node_modules', '.bin', 'tsc');

// Value exports only (types leave no trace at run time); the type-checked consumers below use
// the types.
const EXPECTED_EXPORTS: Record<string, string[]> = {
  'kubelet-pods': [
    'ALL_SOURCE',
    'API_SERVER_SOURCE',
    'CONFIG_FIRST_SEEN_ANNOTATION_KEY',
    'CONFIG_HASH_ANNOTATION_KEY',
    'CONFIG_MIRROR_ANNOTATION_KEY',
    'CONFIG_SOURCE_ANNOTATION_KEY',
    'ERROR_CODES',
    'FILE_SOURCE',
    'HTTP_SOURCE',
    'KubeMirrorClient',
    'KubeletPodsError',
    'MANAGED_EPHEMERAL_CONTAINERS',
    'MAX_CONFIG_LENGTH',
    'NAMESPACE_DEFAULT',
    'PodManager',
    'PodOperation',
    'backoffDelay',
    'buildPodFullName',
    'getPodFullName',
    'getPodSource',
    'getValidatedSources',
    'hasErrorCode',
    'isCriticalPod',
    'isMirrorPod',
    'isMirrorPodOf',
    'isStaticPod',
    'parsePodFullName',
    'realClock',
  ],
  'kubelet-pods/sources': [
    'applySchemeDefaults',
    'applyStaticPodDefaults',
    'checkStaticPodReferences',
    'computeStaticPodUID',
    'createApiserverSource',
    'createFileSource',
    'createHttpSource',
    'createPodConfig',
    'createSourcesReady',
    'decodePodList',
    'decodeSinglePod',
    'defaultPullPolicy',
    'findApiReferences',
    'generatePodName',
    'isDNS1123Label',
    'isDNS1123Subdomain',
    'kubePodListWatch',
    'parseHttpBody',
    'parseManifest',
    'parseManifestFile',
    'parseManifestText',
    'validateStaticPodCreate',
  ],
  'kubelet-pods/agent': [
    'AGENT_CONFIG_DEFAULTS',
    'KUBELET_CONFIG_API_VERSION',
    'KUBELET_CONFIG_KIND',
    'KUBELET_OWNED_POD_CONDITIONS',
    'SIMULATION_ANNOTATIONS',
    'createAgent',
    'createLogger',
    'createSimulatedStatusProvider',
    'describeIgnoredFields',
    'loadAgentConfig',
    'parseRunArgs',
    'resolveRunConfig',
  ],
  'kubelet-pods/testing': [
    'CONTROL_PLANE_BINARY_ENV',
    'FakeClock',
    'FakeMirrorClient',
    'controlPlaneSourceHash',
    'defaultCacheRoot',
    'ensureControlPlaneBinary',
    'settle',
    'startLocalCluster',
  ],
};

const MANIFEST = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: nginx\n';

// One consumer per entry point; each prints one line the test checks.
const CONSUMERS: Record<string, string> = {
  'root.ts': `import { PodManager, KubeletPodsError, hasErrorCode, parsePodFullName, backoffDelay, type ResolvedPodUID, type MirrorClient } from 'kubelet-pods';
import { FakeMirrorClient } from 'kubelet-pods/testing';
const client: MirrorClient = new FakeMirrorClient();
const pm = new PodManager({ mirrorClient: client });
pm.addPod({ metadata: { uid: 's1', name: 'web', namespace: 'default', annotations: { 'kubernetes.io/config.source': 'file' } } });
pm.addPod({ metadata: { uid: 'm1', name: 'web', namespace: 'default', annotations: { 'kubernetes.io/config.mirror': 'h' } } });
const uid: ResolvedPodUID = pm.translatePodUID('m1');
let code = '';
try {
  parsePodFullName('no-namespace');
} catch (err) {
  if (err instanceof KubeletPodsError && hasErrorCode(err, 'KP_ERR_POD_FULL_NAME')) code = err.code;
}
console.log(uid, pm.getPods().length, code, backoffDelay(3, { initialMs: 100, maxMs: 1000, jitter: 0 }));
`,
  'sources.ts': `import { FILE_SOURCE, PodOperation } from 'kubelet-pods';
import { applyStaticPodDefaults, createPodConfig, createSourcesReady, decodeSinglePod, type PodUpdate } from 'kubelet-pods/sources';
const decoded = decodeSinglePod(${JSON.stringify(MANIFEST)}, (pod) =>
  applyStaticPodDefaults(pod, { source: '/etc/manifests/web.yaml', isFile: true, nodeName: 'node-1' }),
);
if (decoded.kind !== 'ok') throw new Error(decoded.kind);
const config = createPodConfig();
const ready = createSourcesReady((seen) => config.seenAllSources(seen));
config.channel(FILE_SOURCE)({ op: PodOperation.SET, source: FILE_SOURCE, pods: [decoded.value] });
const update: PodUpdate = (await config.updates.next()).value;
const before = ready.allReady();
ready.addSource(update.source);
console.log(update.op, update.source, update.pods.map((p) => p.metadata?.name).join(','), before, ready.allReady());
`,
  'agent.ts': `import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, createSimulatedStatusProvider, resolveRunConfig, type AgentConfig } from 'kubelet-pods/agent';
const dir = await mkdtemp(join(tmpdir(), 'kp-consumer-'));
await writeFile(join(dir, 'web.yaml'), ${JSON.stringify(MANIFEST)});
const { config } = await resolveRunConfig(['--pod-manifest-path', dir, '--hostname-override', 'Node-1', '--healthz-port', '0', '--read-only-port', '0', '--port', '0']);
const typed: AgentConfig = config;
const agent = createAgent({ config: typed, statusProvider: createSimulatedStatusProvider({ startDelayMs: 0 }) });
await agent.start();
const deadline = Date.now() + 10_000;
while (!(agent.allSourcesReady() && agent.podManager.getPods().length === 1)) {
  if (Date.now() > deadline) throw new Error('the agent did not read the manifest within 10 s');
  await new Promise((resolve) => setTimeout(resolve, 20));
}
console.log(config.nodeName, agent.connected, agent.podManager.getPods().map((p) => p.metadata?.name).join(','));
await agent.stop();
await rm(dir, { recursive: true });
`,
  'testing.ts': `import { fileURLToPath } from 'node:url';
import type { Clock } from 'kubelet-pods';
import { FakeClock, controlPlaneSourceHash, settle, startLocalCluster, type LocalClusterOptions } from 'kubelet-pods/testing';
const clock = new FakeClock(0);
const asClock: Clock = clock;
let fired = 0;
asClock.setTimeout(() => fired++, 1000);
await clock.advance(999);
const early = fired;
await clock.advance(1);
await settle();
const options: LocalClusterOptions = { nodes: ['node-1'] };
// The control plane's Go sources ship in the package: the same sources as the checkout's.
const sources = fileURLToPath(new URL('./node_modules/kubelet-pods/tools/control-plane/', import.meta.url));
console.log(early, fired, typeof startLocalCluster, options.nodes.length, await controlPlaneSourceHash(sources));
`,
  'surface.ts': `for (const path of ${JSON.stringify(Object.keys(EXPECTED_EXPORTS))}) {
  console.log(JSON.stringify([path, Object.keys(await import(path)).sort()]));
}
`,
};

it('npm pack produces a package whose every entry point installs, imports by name, type-checks and runs', { timeout: 240_000 }, async () => {
  const work = await mkdtemp(join(tmpdir(), 'kp-pack-'));
  try {
    // dist/ as `npm test` has just built it: the package's prepack (a fresh build, which starts
    // by removing dist/) would pull it from under the test files running beside this one.
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root });
    const tarball = (await readdir(work)).find((f) => f.endsWith('.tgz'));
    assert.ok(tarball, 'npm pack wrote a tarball');
    const consumer = join(work, 'consumer');
    await run('mkdir', ['-p', consumer]);
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module', private: true }));
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, tarball)], { cwd: consumer });

    for (const [name, text] of Object.entries(CONSUMERS)) await writeFile(join(consumer, name), text);
    await run(
      tsc,
      ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', ...Object.keys(CONSUMERS)],
      { cwd: consumer },
    );
    const output = async (name: string): Promise<string> =>
      (await run(process.execPath, [name.replace(/\.ts$/, '.js')], { cwd: consumer })).stdout.trim();

    assert.equal(await output('root.ts'), 's1 1 KP_ERR_POD_FULL_NAME 400');
    assert.equal(await output('sources.ts'), 'ADD file web-node-1 false true');
    assert.equal(await output('agent.ts'), 'node-1 false web-node-1');
    const checkoutHash = await controlPlaneSourceHash(join(root, 'tools', 'control-plane'));
    assert.equal(await output('testing.ts'), `0 1 function 1 ${checkoutHash}`);

    const surface = Object.fromEntries((await output('surface.ts')).split('\n').map((line) => JSON.parse(line) as [string, string[]]));
    assert.deepEqual(surface, EXPECTED_EXPORTS);

    // Only the entry points are reachable: internal modules are not part of the API.
    await assert.rejects(
      run(process.execPath, ['--input-type=module', '-e', "await import('kubelet-pods/dist/sources/mux.js')"], { cwd: consumer }),
      /ERR_PACKAGE_PATH_NOT_EXPORTED/,
    );

    const help = await run(join(consumer, 'node_modules', '.bin', 'kubelet-pods'), ['--help'], { cwd: consumer });
    assert.match(help.stdout, /run\s+run the node agent/);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
