// The kubelet port over loopback against the real control plane: HTTPS, bearer tokens checked
// with real TokenReviews and requests authorized with real SubjectAccessReviews, both created
// as the node itself (its system:node rules allow them under the Node authorizer), and the
// API server's own kubelet client certificate accepted through clientCAFile.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { resolveRunConfig } from '../../src/cli/flags.js';
import { kubeConfigFromFile, useControlPlane } from '../helpers/control-plane.js';
import { httpsGet } from '../helpers/https-get.js';
import { podManifestYaml } from '../helpers/manifests.js';
import { waitFor } from '../helpers/wait.js';

const NODE = 'kp-port';
const OTHER = 'kp-port-other';
const cp = useControlPlane({ nodes: [NODE, OTHER] });

const token = (kubeconfig: string): string => kubeConfigFromFile(kubeconfig).getCurrentUser()!.token!;

describe('the kubelet port on a real control plane (Webhook authentication and authorization)', () => {
  let agent: Agent;
  let dir: string;
  let base: string;
  let namespace: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kp-port-'));
    namespace = await cp.createNamespace('kport');
    await writeFile(join(dir, 'web.yaml'), podManifestYaml('web', namespace));
    const configFile = join(dir, 'config.yaml');
    // A config file: the kubelet's secure defaults (anonymous off, Webhook, token webhook on).
    await writeFile(configFile, stringify({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration', authentication: { x509: { clientCAFile: cp.cluster.caFile } } }));
    const { config } = await resolveRunConfig([
      '--kubeconfig', cp.cluster.nodeKubeconfigs[NODE]!,
      '--hostname-override', NODE,
      '--config', configFile,
      '--pod-manifest-path', join(dir, 'web.yaml'),
    ]);
    agent = createAgent({ config, housekeepingIntervalMs: 200, listenPorts: { kubelet: 0 } });
    await agent.start();
    const kubelet = agent.addresses().kubelet;
    assert.ok(kubelet, 'the kubelet port listens');
    assert.equal(kubelet.address, '127.0.0.1', 'on loopback by default');
    base = `https://127.0.0.1:${kubelet.port}`;
    await waitFor(async () => (await cp.adminApi.readNode({ name: NODE }).catch(() => undefined))?.status?.daemonEndpoints?.kubeletEndpoint?.Port === kubelet.port, 'the Node to report the port it listens on', { timeoutMs: 20_000 });
  });
  after(async () => {
    await agent?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the admin (system:masters) by bearer token: /pods, /metrics, /healthz, /configz and /containerLogs', async () => {
    const admin = { token: token(cp.cluster.adminKubeconfig) };
    const pods = await httpsGet(`${base}/pods`, admin);
    assert.equal(pods.status, 200, pods.body);
    assert.deepEqual((JSON.parse(pods.body) as { items: { metadata: { name: string } }[] }).items.map((p) => p.metadata.name), [`web-${NODE}`]);
    const metrics = await httpsGet(`${base}/metrics`, admin);
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /^kubelet_mirror_pods /m);
    assert.deepEqual(await httpsGet(`${base}/healthz`, admin), { status: 200, body: 'ok' });
    const configz = await httpsGet(`${base}/configz`, admin);
    assert.equal(configz.status, 200);
    assert.equal((JSON.parse(configz.body) as { kubeletconfig: { authorization: { mode: string } } }).kubeletconfig.authorization.mode, 'Webhook');
    const logs = await waitFor(async () => {
      const r = await httpsGet(`${base}/containerLogs/${namespace}/web-${NODE}/main`, admin);
      return r.status === 200 && r.body !== '' ? r : undefined;
    }, 'the container log after the simulated start', { timeoutMs: 10_000 });
    assert.equal(logs.body, 'started container "main" (image nginx:1.27)\n');
  });

  it('another node\'s identity is authenticated but may not read this node: 403 from the SubjectAccessReview', async () => {
    const other = { token: token(cp.cluster.nodeKubeconfigs[OTHER]!) };
    const metrics = await httpsGet(`${base}/metrics`, other);
    assert.equal(metrics.status, 403);
    assert.equal(metrics.body, `Forbidden (user=system:node:${OTHER}, verb=get, resource=nodes, subresource(s)=[metrics])\n`);
    assert.equal((await httpsGet(`${base}/pods`, other)).status, 403);
  });

  it('no credentials, or a token the API server does not know: 401', async () => {
    assert.deepEqual(await httpsGet(`${base}/pods`), { status: 401, body: 'Unauthorized' });
    assert.equal((await httpsGet(`${base}/pods`, { token: 'not-a-token' })).status, 401);
  });

  it('the API server\'s kubelet client certificate (CN kube-apiserver-kubelet-client, O system:masters) through clientCAFile', async () => {
    const pki = join(cp.cluster.dir, 'pki');
    const client = { cert: await readFile(join(pki, 'apiserver-kubelet-client.crt'), 'utf8'), key: await readFile(join(pki, 'apiserver-kubelet-client.key'), 'utf8') };
    const pods = await httpsGet(`${base}/pods`, client);
    assert.equal(pods.status, 200, pods.body);
  });
});
