// KubeletConfiguration loading and kubelet flag merging for `kubelet-pods run`
// (cmd/kubelet/app/options and the v1beta1 defaults in pkg/kubelet/apis/config/v1beta1).

import { resolve } from 'node:path';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseRunArgs, resolveRunConfig } from '../../../src/cli/flags.js';
import { AGENT_CONFIG_DEFAULTS, loadAgentConfig, type LoadAgentConfigOptions } from '../../../src/config/agent-config.js';
import { describeIgnoredFields } from '../../../src/config/kubelet-config-file.js';
import { hasErrorCode, KubeletPodsError } from '../../../src/errors.js';

// ../shared sits beside the checkout (build/test/unit/cli → four levels up is the checkout).
const EXAMPLE = fileURLToPath(new URL('../../../../../shared/spec/kubelet-config-example.yaml', import.meta.url));

// An in-memory file system with one file, and a fixed host name.
function files(content: Record<string, string>, host = 'Node-A'): LoadAgentConfigOptions {
  return {
    readFile: async (p) => {
      const text = content[p];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
      return text;
    },
    hostname: () => host,
  };
}

const header = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';

function expectError(code: 'KP_ERR_CONFIG_INVALID' | 'KP_ERR_CONFIG_FLAGS' | 'KP_ERR_CONFIG_READ', ...fragments: string[]) {
  return (err: unknown) => {
    assert.ok(err instanceof KubeletPodsError, `expected a KubeletPodsError, got ${String(err)}`);
    assert.ok(hasErrorCode(err, code), `expected ${code}, got ${err.code}: ${err.message}`);
    for (const f of fragments) assert.ok(err.message.includes(f), `message ${JSON.stringify(err.message)} should mention ${JSON.stringify(f)}`);
    return true;
  };
}

describe('parseRunArgs', () => {
  it('reads every kubelet flag, in both --flag value and --flag=value forms', () => {
    const flags = parseRunArgs([
      '--kubeconfig', '/etc/kubelet.conf',
      '--config=/etc/kubelet.yaml',
      '--hostname-override', 'Worker-1',
      '--pod-manifest-path', '/etc/kubernetes/manifests',
      '--manifest-url=http://example.test/pods',
      '--manifest-url-header', 'A:1,B:2',
      '--manifest-url-header=B:3',
      '--address', '0.0.0.0',
      '--read-only-port', '10255',
      '--healthz-port=0',
    ]);
    assert.deepEqual(
      { ...flags },
      {
        kubeconfig: '/etc/kubelet.conf',
        config: '/etc/kubelet.yaml',
        hostnameOverride: 'Worker-1',
        podManifestPath: '/etc/kubernetes/manifests',
        manifestURL: 'http://example.test/pods',
        manifestURLHeader: ['A:1,B:2', 'B:3'],
        address: '0.0.0.0',
        readOnlyPort: '10255',
        healthzPort: '0',
      },
    );
    assert.ok(Object.isFrozen(flags));
  });

  it('reports unknown flags, missing values and stray arguments all at once', () => {
    assert.throws(
      () => parseRunArgs(['--bogus', 'x', '--kubeconfig', '--port=1']),
      expectError('KP_ERR_CONFIG_FLAGS', 'unknown flag --bogus', 'unexpected argument "x"', '--port'),
    );
    assert.throws(() => parseRunArgs(['--config']), expectError('KP_ERR_CONFIG_FLAGS', '--config needs a value'));
  });
});

describe('loadAgentConfig', () => {
  it('uses the kubelet defaults (with loopback endpoints) when there is no file', async () => {
    const { config, ignoredFields } = await loadAgentConfig({}, files({}, 'My-Host.Example'));
    assert.deepEqual(ignoredFields, []);
    assert.equal(config.nodeName, 'my-host.example');
    assert.equal(config.fileCheckFrequencyMs, 20_000);
    assert.equal(config.httpCheckFrequencyMs, 20_000);
    assert.equal(config.syncFrequencyMs, 60_000);
    assert.equal(config.nodeStatusUpdateFrequencyMs, 10_000);
    assert.equal(config.kubeAPIQPS, 50);
    assert.equal(config.kubeAPIBurst, 100);
    assert.equal(config.address, '127.0.0.1');
    assert.equal(config.healthzBindAddress, '127.0.0.1');
    assert.equal(config.readOnlyPort, 10255, "the kubelet's legacy flag default, without a file");
    assert.equal(config.healthzPort, 10248);
    assert.equal(config.staticPodPath, undefined);
    assert.equal(config.staticPodURL, undefined);
    assert.deepEqual(config.staticPodURLHeader, {});
    assert.equal(config.kubeconfig, undefined);
    assert.ok(Object.isFrozen(config));
  });

  it('loads the shared example KubeletConfiguration and honours its fields', async () => {
    const { config, ignoredFields } = await loadAgentConfig({ config: EXAMPLE }, { hostname: () => 'node-a' });
    assert.equal(config.configFile, EXAMPLE);
    assert.equal(config.staticPodPath, '/etc/kubernetes/manifests');
    assert.equal(config.fileCheckFrequencyMs, 20_000);
    assert.equal(config.httpCheckFrequencyMs, 20_000);
    assert.equal(config.syncFrequencyMs, 60_000);
    assert.equal(config.nodeStatusUpdateFrequencyMs, 10_000);
    assert.equal(config.kubeAPIQPS, 5);
    assert.equal(config.kubeAPIBurst, 10);
    assert.equal(config.eventRecordQPS, 5);
    assert.equal(config.eventBurst, 10);
    assert.equal(config.events, true);
    assert.equal(config.address, '0.0.0.0');
    assert.equal(config.readOnlyPort, 10255);
    assert.equal(config.healthzPort, 10248);
    assert.equal(config.healthzBindAddress, '127.0.0.1');
    for (const f of ['cgroupDriver', 'evictionHard', 'streamingConnectionIdleTimeout']) {
      assert.ok(ignoredFields.includes(f), `${f} should be listed as ignored`);
    }
    assert.equal(config.clientCAFile, '/etc/kubernetes/pki/ca.pem');
    assert.equal(config.anonymousAuth, false);
    assert.equal(config.authenticationTokenWebhook, true);
    assert.equal(config.authorizationMode, 'Webhook');
    assert.equal(config.authorizationWebhookCacheUnauthorizedTTLMs, 30_000);
    for (const f of ['apiVersion', 'kind', 'staticPodPath', 'syncFrequency', 'kubeAPIQPS', 'eventRecordQPS', 'eventBurst', 'address', 'port', 'maxPods', 'readOnlyPort', 'healthzPort', 'authentication', 'authorization']) {
      assert.ok(!ignoredFields.includes(f), `${f} is honoured, not ignored`);
    }
    assert.deepEqual([...ignoredFields], [...ignoredFields].sort());
    const line = describeIgnoredFields(ignoredFields);
    assert.ok(line !== undefined && !line.includes('\n') && line.includes('cgroupDriver'));
    assert.equal(describeIgnoredFields([]), undefined);
  });

  it('lets flags win over the file', async () => {
    const text =
      header +
      'staticPodPath: /from/file\nstaticPodURL: http://file.test/\nstaticPodURLHeader:\n  X-Token: [secret-from-file]\n' +
      'address: 10.0.0.1\nreadOnlyPort: 10255\nhealthzPort: 10248\n';
    const { config } = await resolveRunConfig(
      [
        '--config', '/c.yaml',
        '--pod-manifest-path', '/from/flag',
        '--manifest-url', 'http://flag.test/',
        '--manifest-url-header', 'X-A:one,X-B:two',
        '--manifest-url-header', 'X-A:three',
        '--address', '127.0.0.2',
        '--read-only-port', '0',
        '--healthz-port', '12345',
        '--hostname-override', '  Mixed.Case  ',
      ],
      files({ '/c.yaml': text }),
    );
    assert.equal(config.staticPodPath, '/from/flag');
    assert.equal(config.staticPodURL, 'http://flag.test/');
    assert.deepEqual(config.staticPodURLHeader, { 'X-A': ['one', 'three'], 'X-B': ['two'] });
    assert.equal(config.address, '127.0.0.2');
    assert.equal(config.readOnlyPort, 0);
    assert.equal(config.healthzPort, 12345);
    assert.equal(config.nodeName, 'mixed.case');
  });

  it('takes header values with colons and keeps file headers when no flag is given', async () => {
    const text = header + 'staticPodURLHeader:\n  Authorization: ["Bearer a:b"]\n  X-Multi: [a, b]\n';
    const { config } = await loadAgentConfig({ config: '/c.yaml' }, files({ '/c.yaml': text }));
    assert.deepEqual(config.staticPodURLHeader, { Authorization: ['Bearer a:b'], 'X-Multi': ['a', 'b'] });
    const fromFlag = await loadAgentConfig({ manifestURLHeader: ['Authorization:Bearer x:y'] }, files({}));
    assert.deepEqual(fromFlag.config.staticPodURLHeader, { Authorization: ['Bearer x:y'] });
  });

  const bad: { desc: string; yaml: string; fragments: string[] }[] = [
    { desc: 'unknown kind', yaml: 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeProxyConfiguration\n', fragments: ['kind', 'KubeProxyConfiguration'] },
    { desc: 'unknown apiVersion', yaml: 'apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n', fragments: ['apiVersion'] },
    { desc: 'missing apiVersion and kind', yaml: 'staticPodPath: /x\n', fragments: ['apiVersion', 'kind'] },
    { desc: 'bad duration', yaml: header + 'fileCheckFrequency: 20 seconds\n', fragments: ['fileCheckFrequency', '"20 seconds"'] },
    { desc: 'duration given as a number', yaml: header + 'syncFrequency: 60\n', fragments: ['syncFrequency'] },
    { desc: 'zero sync frequency', yaml: header + 'syncFrequency: 0s\n', fragments: ['syncFrequency', 'positive'] },
    { desc: 'negative node status frequency', yaml: header + 'nodeStatusUpdateFrequency: -10s\n', fragments: ['nodeStatusUpdateFrequency'] },
    { desc: 'negative port', yaml: header + 'readOnlyPort: -1\n', fragments: ['readOnlyPort', '-1'] },
    { desc: 'port too large', yaml: header + 'healthzPort: 70000\n', fragments: ['healthzPort'] },
    { desc: 'non-numeric QPS', yaml: header + 'kubeAPIQPS: fast\n', fragments: ['kubeAPIQPS', '"fast"'] },
    { desc: 'fractional burst', yaml: header + 'kubeAPIBurst: 1.5\n', fragments: ['kubeAPIBurst'] },
    { desc: 'address not an IP', yaml: header + 'address: localhost\n', fragments: ['address', 'localhost'] },
    { desc: 'not a mapping', yaml: '- a\n- b\n', fragments: ['KubeletConfiguration'] },
    { desc: 'not YAML', yaml: 'a: [\n', fragments: ['YAML'] },
  ];
  for (const c of bad) {
    it(`rejects a file with ${c.desc}, naming the field and the file`, async () => {
      await assert.rejects(loadAgentConfig({ config: '/etc/bad.yaml' }, files({ '/etc/bad.yaml': c.yaml })), expectError('KP_ERR_CONFIG_INVALID', '"/etc/bad.yaml"', ...c.fragments));
    });
  }

  it('lists every problem of a file at once', async () => {
    const text = header + 'fileCheckFrequency: soon\nreadOnlyPort: -5\nkubeAPIQPS: "50"\nhealthzBindAddress: nowhere\n';
    await assert.rejects(
      loadAgentConfig({ config: '/f.yaml', healthzPort: 'x' }, files({ '/f.yaml': text })),
      expectError('KP_ERR_CONFIG_INVALID', 'fileCheckFrequency', 'readOnlyPort', 'kubeAPIQPS', 'healthzBindAddress', '--healthz-port'),
    );
  });

  it('the kubelet port\'s authentication flags: the kubelet\'s legacy defaults with flags only, the file\'s defaults with a file, Go booleans', async () => {
    const flagsOnly = (await resolveRunConfig(['--hostname-override', 'n'], files({}))).config;
    assert.deepEqual([flagsOnly.anonymousAuth, flagsOnly.authenticationTokenWebhook, flagsOnly.authorizationMode], [true, false, 'AlwaysAllow']);
    const withFile = (await resolveRunConfig(['--config', '/c.yaml'], files({ '/c.yaml': header }))).config;
    assert.deepEqual([withFile.anonymousAuth, withFile.authenticationTokenWebhook, withFile.authorizationMode], [false, true, 'Webhook']);
    const set = (
      await resolveRunConfig(['--anonymous-auth=false', '--authentication-token-webhook', '--authorization-mode', 'Webhook', '--client-ca-file', 'ca.pem'], files({}))
    ).config;
    assert.deepEqual([set.anonymousAuth, set.authenticationTokenWebhook, set.authorizationMode], [false, true, 'Webhook']);
    assert.equal(set.clientCAFile, resolve('ca.pem'), 'a flag path is relative to the working directory');
    const file = header + 'tlsCertFile: pki/kubelet.crt\ntlsPrivateKeyFile: pki/kubelet.key\nauthentication:\n  anonymous:\n    enabled: true\n';
    const fromFile = (await resolveRunConfig(['--config', '/etc/kp/c.yaml'], files({ '/etc/kp/c.yaml': file }))).config;
    assert.equal(fromFile.tlsCertFile, '/etc/kp/pki/kubelet.crt', "a file path is relative to the file's folder");
    assert.equal(fromFile.anonymousAuth, true);
    await assert.rejects(resolveRunConfig(['--anonymous-auth=maybe'], files({})), expectError('KP_ERR_CONFIG_FLAGS', '--anonymous-auth', 'true or false'));
    await assert.rejects(resolveRunConfig(['--authorization-mode', 'RBAC'], files({})), expectError('KP_ERR_CONFIG_FLAGS', '--authorization-mode', 'AlwaysAllow, Webhook'));
    await assert.rejects(resolveRunConfig(['--tls-cert-file', 'x.crt'], files({})), expectError('KP_ERR_CONFIG_FLAGS', '--tls-cert-file and --tls-private-key-file'));
    const bad = header + 'authorization:\n  mode: Node\nauthentication:\n  webhook:\n    enabled: "yes"\n';
    await assert.rejects(
      resolveRunConfig(['--config', '/b.yaml'], files({ '/b.yaml': bad })),
      expectError('KP_ERR_CONFIG_INVALID', 'authorization.mode', 'authentication.webhook.enabled'),
    );
  });

  it('rejects bad flag values, naming the flag', async () => {
    await assert.rejects(loadAgentConfig({ readOnlyPort: '-1' }, files({})), expectError('KP_ERR_CONFIG_FLAGS', '--read-only-port'));
    await assert.rejects(loadAgentConfig({ healthzPort: 'abc' }, files({})), expectError('KP_ERR_CONFIG_FLAGS', '--healthz-port'));
    await assert.rejects(loadAgentConfig({ address: 'nope' }, files({})), expectError('KP_ERR_CONFIG_FLAGS', '--address'));
    await assert.rejects(loadAgentConfig({ hostnameOverride: '  ' }, files({})), expectError('KP_ERR_CONFIG_FLAGS', '--hostname-override'));
  });

  it('never puts header values in errors', async () => {
    const err = await loadAgentConfig({ manifestURLHeader: ['Good:ok', 'no-colon-secret-value', 'Bad Name:secret-value-2'] }, files({})).then(
      () => assert.fail('should reject'),
      (e: unknown) => e as Error,
    );
    assert.ok(hasErrorCode(err, 'KP_ERR_CONFIG_FLAGS'));
    assert.ok(err.message.includes('occurrence 2') && err.message.includes('occurrence 3'));
    assert.ok(!err.message.includes('secret'), err.message);
    const fileErr = await loadAgentConfig(
      { config: '/h.yaml' },
      files({ '/h.yaml': header + 'staticPodURLHeader:\n  X-Token: super-secret\n' }),
    ).then(
      () => assert.fail('should reject'),
      (e: unknown) => e as Error,
    );
    assert.ok(hasErrorCode(fileErr, 'KP_ERR_CONFIG_INVALID'));
    assert.ok(fileErr.message.includes('staticPodURLHeader.X-Token'));
    assert.ok(!fileErr.message.includes('super-secret'), fileErr.message);
  });

  it('--events turns Kubernetes Events off or on; anything but true or false is refused', async () => {
    assert.equal((await resolveRunConfig(['--events=false'], files({}))).config.events, false);
    assert.equal((await resolveRunConfig(['--events', 'TRUE'], files({}))).config.events, true);
    assert.equal((await resolveRunConfig([], files({}))).config.events, true);
    await assert.rejects(resolveRunConfig(['--events=off'], files({})), expectError('KP_ERR_CONFIG_FLAGS', '--events: must be true or false, got "off"'));
  });

  it('eventRecordQPS and eventBurst are non-negative integers (0: no limit)', async () => {
    const path = '/etc/k.yaml';
    const { config } = await loadAgentConfig({ config: path }, files({ [path]: `${header}eventRecordQPS: 0\neventBurst: 3\n` }));
    assert.equal(config.eventRecordQPS, 0);
    assert.equal(config.eventBurst, 3);
    await assert.rejects(
      loadAgentConfig({ config: path }, files({ [path]: `${header}eventRecordQPS: -1\neventBurst: 1.5\n` })),
      expectError('KP_ERR_CONFIG_INVALID', 'eventRecordQPS: must be between 0', 'eventBurst: must be an integer'),
    );
  });

  it('reports an unreadable file with KP_ERR_CONFIG_READ naming it', async () => {
    await assert.rejects(loadAgentConfig({ config: '/missing.yaml' }, files({})), expectError('KP_ERR_CONFIG_READ', '"/missing.yaml"'));
  });
});

describe('relative paths', () => {
  it('a relative staticPodPath in the file is resolved against the file\'s folder', async () => {
    const { config } = await loadAgentConfig(
      { config: '/etc/kubelet-pods/config.yaml' },
      files({ '/etc/kubelet-pods/config.yaml': `${header}staticPodPath: manifests\n` }),
    );
    assert.equal(config.staticPodPath, '/etc/kubelet-pods/manifests');
  });

  it('a relative --pod-manifest-path is resolved against the working directory', async () => {
    const { config } = await loadAgentConfig({ podManifestPath: 'm' }, files({}));
    assert.equal(config.staticPodPath, `${process.cwd()}/m`);
  });
});
