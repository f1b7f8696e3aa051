// /configz (the kubelet's {"kubeletconfig": …} shape, test/e2e/framework/kubelet/config.go
// decodes it) and /containerLogs (pkg/kubelet/server/server.go getContainerLogs) with the
// simulated runtime's per-container log buffer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveRunConfig } from '../../../src/cli/flags.js';
import { kubeletConfigurationOf } from '../../../src/config/kubelet-configuration.js';
import { configzRoute } from '../../../src/server/configz.js';
import { containerLogsRoute } from '../../../src/server/container-logs.js';
import { createAgentServer } from '../../../src/server/server.js';
import { createContainerLogBuffer } from '../../../src/runtime/container-log-buffer.js';
import { createSimulatedStatusProvider } from '../../../src/runtime/simulated-runtime.js';
import { FakeClock } from '../../../src/time/fake-clock.js';
import type { Pod } from '../../../src/pod/types.js';

const FILE = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodURL: http://example.invalid/pods
staticPodURLHeader:
  Authorization: ["Bearer secret-one", "secret-two"]
syncFrequency: 30s
authentication:
  x509:
    clientCAFile: ca.pem
evictionHard: {}
`;

async function serveRoutes(routes: Parameters<typeof createAgentServer>[0]['routes']) {
  const server = createAgentServer({ routes });
  const { port } = await server.listen();
  return { server, url: (p: string) => `http://127.0.0.1:${port}${p}` };
}

describe('/configz', () => {
  it('is {"kubeletconfig": …} with v1beta1 names and nesting, Go durations, no kind or apiVersion, header values redacted', async () => {
    const { config } = await resolveRunConfig(['--config', '/etc/kp/config.yaml', '--hostname-override', 'n', '--port', '10260'], {
      readFile: async () => FILE,
    });
    const { server, url } = await serveRoutes([configzRoute({ config })]);
    try {
      const res = await fetch(url('/configz'));
      assert.equal(res.headers.get('content-type'), 'application/json');
      const text = await res.text();
      assert.ok(!text.includes('secret'), 'no header value is shown');
      const body = JSON.parse(text) as { kubeletconfig: Record<string, unknown> };
      assert.deepEqual(Object.keys(body), ['kubeletconfig']);
      const kc = body.kubeletconfig;
      assert.equal(kc['kind'], undefined);
      assert.equal(kc['apiVersion'], undefined);
      assert.equal(kc['evictionHard'], undefined, 'fields not acted on are not shown');
      assert.equal(kc['syncFrequency'], '30s');
      assert.equal(kc['fileCheckFrequency'], '20s');
      assert.equal(kc['port'], 10260);
      assert.equal(kc['readOnlyPort'], 0);
      assert.equal(kc['staticPodURL'], 'http://example.invalid/pods');
      assert.deepEqual(kc['staticPodURLHeader'], { Authorization: ['[redacted]', '[redacted]'] });
      assert.deepEqual(kc['authentication'], {
        x509: { clientCAFile: '/etc/kp/ca.pem' },
        webhook: { enabled: true, cacheTTL: '2m0s' },
        anonymous: { enabled: false },
      });
      assert.deepEqual(kc['authorization'], { mode: 'Webhook', webhook: { cacheAuthorizedTTL: '5m0s', cacheUnauthorizedTTL: '30s' } });
    } finally {
      await server.close();
    }
  });

  it('leaves out fields without a value (no staticPodPath, no headers)', async () => {
    const { config } = await resolveRunConfig(['--hostname-override', 'n']);
    const kc = kubeletConfigurationOf(config);
    assert.ok(!('staticPodPath' in kc) && !('staticPodURLHeader' in kc) && !('tlsCertFile' in kc) && !('scenarios' in kc));
    assert.equal(kc['readOnlyPort'], 10255);
    assert.equal((kc['authorization'] as { mode: string }).mode, 'AlwaysAllow');
  });
});

describe('scenarios in /configz', () => {
  it('shows them as the file writes them', async () => {
    const { config } = await resolveRunConfig(['--config', '/c.yaml', '--hostname-override', 'n'], {
      readFile: async () => 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nscenarios:\n- match: {image: "*:broken"}\n  imagePullFailure: {}\n- nodeCondition: {from: 90s}\n',
    });
    assert.deepEqual(kubeletConfigurationOf(config)['scenarios'], [
      { name: 'scenarios[0]', match: { image: '*:broken' }, imagePullFailure: {} },
      { name: 'scenarios[1]', nodeCondition: { type: 'NotReady', from: '1m30s' } },
    ]);
  });
});

describe('container log buffer', () => {
  it('keeps lines in order, bounded per container: the oldest go first', () => {
    const logs = createContainerLogBuffer({ maxBytesPerContainer: 20 });
    const t = new Date(0);
    for (const line of ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']) logs.append('u', 'c', t, line);
    assert.deepEqual(logs.lines('u', 'c')?.map((l) => l.text), ['bbbb', 'cccc', 'dddd', 'eeee'], '4 lines of 5 bytes fill 20');
    logs.append('u', 'c', t, 'ffff');
    assert.deepEqual(logs.lines('u', 'c')?.map((l) => l.text), ['cccc', 'dddd', 'eeee', 'ffff']);
    logs.append('u', 'c', t, 'x'.repeat(100));
    assert.deepEqual(logs.lines('u', 'c')?.map((l) => l.text.length), [19], 'a line over the bound is cut to it');
    assert.equal(logs.lines('u', 'other'), undefined);
    logs.forget('u');
    assert.equal(logs.lines('u', 'c'), undefined);
  });
});

describe('/containerLogs', () => {
  const pod: Pod = {
    metadata: { name: 'web-node-a', namespace: 'ns', uid: 'static-uid' },
    spec: {
      initContainers: [{ name: 'init', image: 'busybox' }, { name: 'sidecar', image: 'envoy', restartPolicy: 'Always' }],
      containers: [{ name: 'web', image: 'nginx:1.27' }],
    },
  };
  const podManager = { getPodByName: (ns: string, name: string) => (ns === 'ns' && name === 'web-node-a' ? pod : undefined) };

  it('serves what the simulated runtime wrote at start: a started line per container, an exit line per init container', async () => {
    const clock = new FakeClock(Date.parse('2026-01-02T03:04:05.600Z'));
    const provider = createSimulatedStatusProvider({ clock, startDelayMs: 1000 });
    provider.statusFor(pod, clock.now());
    assert.equal(provider.containerLogs('static-uid', 'web'), undefined, 'nothing before the start');
    await clock.advance(1000);
    provider.appendContainerLog('static-uid', 'web', 'hello from a provider\nsecond line');
    const { server, url } = await serveRoutes([containerLogsRoute({ podManager, logsFor: (u, c) => provider.containerLogs(u, c), now: () => clock.now() })]);
    try {
      const text = async (p: string) => {
        const res = await fetch(url(p));
        return { status: res.status, body: await res.text() };
      };
      assert.deepEqual(await text('/containerLogs/ns/web-node-a/web'), {
        status: 200,
        body: 'started container "web" (image nginx:1.27)\nhello from a provider\nsecond line\n',
      });
      assert.deepEqual(await text('/containerLogs/ns/web-node-a/init'), {
        status: 200,
        body: 'started container "init" (image busybox)\ncontainer "init" exited with code 0 (Completed)\n',
      });
      assert.equal((await text('/containerLogs/ns/web-node-a/sidecar')).body, 'started container "sidecar" (image envoy)\n');
      assert.equal((await text('/containerLogs/ns/web-node-a/web?tailLines=1')).body, 'second line\n');
      assert.equal((await text('/containerLogs/ns/web-node-a/web?tailLines=0')).body, '');
      assert.equal(
        (await text('/containerLogs/ns/web-node-a/init?timestamps=true&tailLines=1')).body,
        '2026-01-02T03:04:06.000Z container "init" exited with code 0 (Completed)\n',
        'the start, in whole seconds',
      );
      assert.equal((await text('/containerLogs/ns/web-node-a/web?limitBytes=7')).body, 'started');
      assert.equal((await text('/containerLogs/ns/web-node-a/web?tailLines=x')).status, 400);
      assert.deepEqual(await text('/containerLogs/ns/other/web'), { status: 404, body: 'pod "other" does not exist\n' });
      assert.deepEqual(await text('/containerLogs/ns/web-node-a/nope'), { status: 404, body: 'container "nope" not found in pod "web-node-a"\n' });
      assert.equal((await text('/containerLogs/ns/web-node-a')).status, 400);
      provider.forget('static-uid');
      assert.equal((await text('/containerLogs/ns/web-node-a/web')).body, '', 'forgotten with its pod');
    } finally {
      await server.close();
      provider.stop();
    }
  });
});
