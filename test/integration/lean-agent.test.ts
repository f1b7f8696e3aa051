// `kubelet-pods run` with a token or a client-certificate kubeconfig never loads client-node's
// runtime (its 2,556 generated model classes were most of the agent's memory with no pods,
// docs/performance.md): the agent runs from the package's bundled command as users run it,
// against the real control plane, until its static pod's mirror is Running, its Node Ready and
// its Lease written; a module loader hook records every module it loaded. With an exec plugin, client-node is loaded
// (a dynamic import) for the credentials only, which also shows that the hook sees it.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { parse as parseYaml, stringify } from 'yaml';
import { startAgentProcess } from '../helpers/agent-process.js';
import { kubeConfigFromFile, readPodIfExists, useControlPlane } from '../helpers/control-plane.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const cp = useControlPlane({ nodes: ['lean-token', 'lean-cert', 'lean-exec'] });

const work = mkdtempSync(join(tmpdir(), 'kp-lean-agent-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// The hook: ES modules through a loader hook (it runs on a thread of its own), CommonJS modules
// through Module._load. Each line is a module URL or a resolved CommonJS path.
writeFileSync(
  join(work, 'hook.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.KP_MODULE_TRACE, url + '\\n');
  return next(url, context);
}
`,
);
writeFileSync(
  join(work, 'trace.mjs'),
  `import Module, { register } from 'node:module';
import { appendFileSync } from 'node:fs';
register(${JSON.stringify(pathToFileURL(join(work, 'hook.mjs')).href)});
const load = Module._load;
Module._load = function (request, parent, isMain) {
  try {
    appendFileSync(process.env.KP_MODULE_TRACE, Module._resolveFilename(request, parent, isMain) + '\\n');
  } catch {}
  return load.apply(this, arguments);
};
`,
);

interface RawKubeconfig {
  users: { name: string; user: Record<string, unknown> }[];
  clusters: { name: string; cluster: Record<string, unknown> }[];
}

/** Runs the agent with that kubeconfig until its mirror is Running; returns the modules it loaded. */
async function modulesLoadedBy(node: string, kubeconfig: string): Promise<string[]> {
  const manifests = mkdtempSync(join(work, `${node}-manifests-`));
  writeFileSync(join(manifests, 'web.yaml'), podManifestYaml('web', cp.namespace));
  const trace = join(work, `${node}.modules`);
  const agent = startAgentProcess({ nodeName: node, kubeconfig, manifestDir: manifests, nodeArgs: ['--import', join(work, 'trace.mjs')], env: { KP_MODULE_TRACE: trace } });
  try {
    const mirror = await waitFor(
      async () => {
        const pod = await readPodIfExists(cp.adminApi, cp.namespace, `web-${node}`);
        return pod?.status?.phase === 'Running' ? pod : undefined;
      },
      `the mirror of web on ${node} Running (agent log: ${agent.logs().slice(-2000)})`,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.ok(mirror.metadata?.annotations?.['kubernetes.io/config.mirror'] !== undefined);
    const nodeObject = await cp.adminApi.readNode({ name: node });
    assert.equal(nodeObject.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    const lease = await kubeConfigFromFile(cp.cluster.adminKubeconfig).makeApiClient(CoordinationV1Api).readNamespacedLease({ name: node, namespace: 'kube-node-lease' });
    assert.equal(lease.spec?.holderIdentity, node);
  } finally {
    await agent.stop();
  }
  return readFileSync(trace, 'utf8').split('\n').filter(Boolean);
}

const clientNode = (modules: string[]): string[] => modules.filter((m) => m.includes('/node_modules/@kubernetes/client-node/'));
const generated = (modules: string[]): string[] => modules.filter((m) => m.includes('/node_modules/@kubernetes/client-node/dist/gen/'));

it('with a token kubeconfig (token and CA inline), the agent loads nothing of client-node', { timeout: 60_000 }, async () => {
  const modules = await modulesLoadedBy('lean-token', cp.cluster.nodeKubeconfigs['lean-token']!);
  // The package's command is a bundle (tools/exe/bin-bundle.ts): its `run` chunk is the agent.
  assert.ok(modules.some((m) => /\/dist\/bin\/run-command-\w+\.js$/.test(m)), 'the hook recorded the agent’s own modules');
  assert.deepEqual(generated(modules), [], 'client-node’s generated models were loaded');
  assert.deepEqual(clientNode(modules), [], 'client-node was loaded');
});

it('with a client-certificate kubeconfig (certificate, key and CA files, relative paths), neither', { timeout: 60_000 }, async () => {
  // The API server's own client certificate for kubelets (CN kube-apiserver-kubelet-client,
  // group system:masters), signed by the cluster CA: an identity the API server takes.
  const dir = mkdtempSync(join(work, 'cert-'));
  const pki = join(cp.cluster.dir, 'pki');
  copyFileSync(join(pki, 'apiserver-kubelet-client.crt'), join(dir, 'client.crt'));
  copyFileSync(join(pki, 'apiserver-kubelet-client.key'), join(dir, 'client.key'));
  copyFileSync(cp.cluster.caFile, join(dir, 'ca.crt'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'cert',
      clusters: [{ name: 'c', cluster: { server: cp.cluster.server, 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'u', user: { 'client-certificate': 'client.crt', 'client-key': 'client.key' } }],
      contexts: [{ name: 'cert', context: { cluster: 'c', user: 'u' } }],
    }),
  );
  const modules = await modulesLoadedBy('lean-cert', kubeconfig);
  assert.deepEqual(generated(modules), []);
  assert.deepEqual(clientNode(modules), []);
});

it('with an exec plugin, client-node is loaded for the credentials, and the agent works the same', { timeout: 60_000 }, async () => {
  const raw = parseYaml(readFileSync(cp.cluster.nodeKubeconfigs['lean-exec']!, 'utf8')) as RawKubeconfig;
  const token = raw.users[0]!.user['token'] as string;
  const credential = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } });
  raw.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', `console.log(${JSON.stringify(credential)})`], interactiveMode: 'Never' } };
  const kubeconfig = join(work, 'exec.kubeconfig');
  writeFileSync(kubeconfig, stringify(raw));
  const modules = await modulesLoadedBy('lean-exec', kubeconfig);
  assert.ok(generated(modules).length > 100, `client-node was not loaded for the exec plugin (${clientNode(modules).length} of its modules)`);
});
