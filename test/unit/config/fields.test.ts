// The configuration table (src/config/fields.ts) is the one source of the flags, the honoured
// KubeletConfiguration fields, the defaults and the table in docs/configuration.md; like
// test/unit/errors.test.ts for error codes, this keeps the doc and the code in step both ways.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { RUN_FLAG_NAMES } from '../../../src/cli/flags.js';
import { AGENT_CONFIG_DEFAULTS, defaultWithoutFile, loadAgentConfig } from '../../../src/config/agent-config.js';
import { formatDuration } from '../../../src/values/go-duration.js';
import { CONFIG_FIELDS, scalarFields, type ConfigField, type FieldType } from '../../../src/config/fields.js';
import { ignoredFieldsOf } from '../../../src/config/kubelet-config-file.js';
import { hasErrorCode } from '../../../src/errors.js';

// A default as the docs show it: a Go duration, a number or an address in backticks, or words.
function formatDefault(type: FieldType): string {
  if (type.kind === 'other') return type.defaultDoc;
  const value = `\`${type.kind === 'duration' ? formatDuration(type.default) : String(type.default)}\``;
  if ('flagsOnlyDefault' in type && type.flagsOnlyDefault !== undefined) {
    return `\`${type.flagsOnlyDefault}\` (flags only), ${value} (with \`--config\`)`;
  }
  return value;
}

function docRow(f: ConfigField): string {
  const flag = f.flag !== undefined ? `\`--${f.flag.name}\`` : '(file only)';
  const field = f.field !== undefined ? `\`${f.field}\`` : '(flag only)';
  return `| ${flag} | ${field} | ${formatDefault(f.type)} | ${f.doc} |`;
}

// The rows of the first table under "## Flags and fields", header and separator left out.
function documentedRows(): string[] {
  const docs = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8');
  const section = docs.split(/^## /m).find((s) => s.startsWith('Flags and fields'));
  assert.ok(section, 'docs/configuration.md has a "## Flags and fields" section');
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  return lines.slice(start + 2, end < 0 ? undefined : end).map((l) => l.trim());
}

describe('the configuration table', () => {
  const expected = CONFIG_FIELDS.map(docRow);

  it('every field of the table has its row in docs/configuration.md', () => {
    const documented = new Set(documentedRows());
    assert.deepEqual(
      expected.filter((row) => !documented.has(row)),
      [],
      'rows missing from (or different in) docs/configuration.md',
    );
  });

  it('docs/configuration.md has no row that is not in the table', () => {
    const known = new Set(expected);
    assert.deepEqual(
      documentedRows().filter((row) => !known.has(row)),
      [],
      'stale rows in docs/configuration.md',
    );
  });

  it('names each AgentConfig property, flag and file field once', async () => {
    const { config } = await loadAgentConfig({}, { hostname: () => 'node-a' });
    assert.deepEqual(CONFIG_FIELDS.map((f) => f.key).sort(), Object.keys(config).sort());
    const flags = CONFIG_FIELDS.flatMap((f) => (f.flag ? [f.flag.name] : []));
    const fields = CONFIG_FIELDS.flatMap((f) => (f.field ? [f.field] : []));
    assert.equal(new Set(flags).size, flags.length);
    assert.equal(new Set(fields).size, fields.length);
  });

  it('the defaults are the scalar fields\' defaults: a file that sets nothing holds them, flags alone the legacy ones', async () => {
    const { config } = await loadAgentConfig({}, { hostname: () => 'node-a' });
    const emptyFile = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
    const withFile = (await loadAgentConfig({ config: '/c.yaml' }, { hostname: () => 'node-a', readFile: async () => emptyFile })).config;
    const scalars = scalarFields();
    assert.deepEqual(Object.keys(AGENT_CONFIG_DEFAULTS).sort(), scalars.map((f) => f.key).sort());
    for (const f of scalars) {
      assert.equal(AGENT_CONFIG_DEFAULTS[f.key as keyof typeof AGENT_CONFIG_DEFAULTS], f.type.default, f.key);
      assert.equal(withFile[f.key], f.type.default, f.key);
      assert.equal(config[f.key], defaultWithoutFile(f.type), f.key);
    }
  });

  it('the read-only port is the kubelet\'s: 10255 with flags only, 0 when a file leaves it unset, the flag over both', async () => {
    const hostname = (): string => 'node-a';
    const file = (text: string) => ({ hostname, readFile: async () => `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${text}` });
    assert.equal((await loadAgentConfig({}, { hostname })).config.readOnlyPort, 10255);
    assert.equal((await loadAgentConfig({ readOnlyPort: '0' }, { hostname })).config.readOnlyPort, 0);
    assert.equal((await loadAgentConfig({ config: '/c.yaml' }, file(''))).config.readOnlyPort, 0);
    assert.equal((await loadAgentConfig({ config: '/c.yaml' }, file('readOnlyPort: 10266\n'))).config.readOnlyPort, 10266);
    assert.equal((await loadAgentConfig({ config: '/c.yaml', readOnlyPort: '10255' }, file(''))).config.readOnlyPort, 10255);
  });

  it('the flags are the table\'s, in its order; scalar flags are addresses, ports, booleans or choices', () => {
    assert.deepEqual(RUN_FLAG_NAMES, CONFIG_FIELDS.flatMap((f) => (f.flag ? [`--${f.flag.name}`] : [])));
    for (const f of scalarFields()) {
      if (f.flag !== undefined) assert.ok(['address', 'port', 'boolean', 'choice'].includes(f.type.kind), `--${f.flag.name} has a flag rule`);
    }
  });

  it('the honoured file fields are the table\'s, plus apiVersion and kind; inside a partly honoured object the others are named by path', () => {
    const file: Record<string, unknown> = { apiVersion: 'v', kind: 'k', evictionHard: {}, authentication: { webhook: { enabled: true }, x509: { clientCAFile: 'ca', other: 1 } } };
    for (const f of CONFIG_FIELDS) if (f.field !== undefined && !f.field.includes('.')) file[f.field] = 'x';
    assert.deepEqual(ignoredFieldsOf(file), ['authentication.x509.other', 'evictionHard']);
    assert.deepEqual(ignoredFieldsOf({ authorization: 'Webhook', tlsMinVersion: 'x' }), ['authorization', 'tlsMinVersion']);
  });
});

describe('the scenarios field of the configuration file', () => {
  const file = (text: string) => ({ hostname: () => 'node-a', readFile: async () => `apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n${text}` });

  it('is read from the file, none by default', async () => {
    const { config, ignoredFields } = await loadAgentConfig(
      { config: '/c.yaml' },
      file('scenarios:\n- name: pulls\n  match: {image: "*:broken"}\n  imagePullFailure: {}\n- nodeCondition: {type: DiskPressure, from: 1m}\n'),
    );
    assert.deepEqual(config.scenarios.map((s) => [s.name, s.behaviour.kind]), [['pulls', 'imagePullFailure'], ['scenarios[1]', 'nodeCondition']]);
    assert.deepEqual(ignoredFields, [], 'an honoured field');
    assert.deepEqual((await loadAgentConfig({}, { hostname: () => 'node-a' })).config.scenarios, []);
  });

  it('refuses a bad scenario naming the file and the field\'s path, with the other problems', async () => {
    await assert.rejects(
      loadAgentConfig({ config: '/c.yaml' }, file('maxPods: many\nscenarios:\n- slowStop: true\n- exit: {code: 1, after: 5s}\n  fraction: 2\n')),
      (err: unknown) =>
        hasErrorCode(err, 'KP_ERR_CONFIG_INVALID') &&
        err.message.includes('"/c.yaml"') &&
        err.message.includes('scenarios[1].fraction: must be a number from 0 to 1, got 2') &&
        err.message.includes('maxPods: must be a number'),
    );
  });
});

describe('examples/scenarios.yaml', () => {
  it('is a valid configuration file with one scenario of each behaviour', async () => {
    const path = new URL('../../../../examples/scenarios.yaml', import.meta.url).pathname;
    const { config, ignoredFields } = await loadAgentConfig({ config: path }, { hostname: () => 'node-a' });
    assert.deepEqual(ignoredFields, []);
    assert.deepEqual(new Set(config.scenarios.map((s) => s.behaviour.kind)), new Set(['exit', 'imagePullFailure', 'oomKill', 'startDelay', 'slowStop', 'readiness', 'nodeCondition']));
  });
});
