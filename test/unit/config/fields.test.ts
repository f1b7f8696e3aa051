// The configuration table (src/config/fields.ts) is the one source of the flags, the honoured
// KubeletConfiguration fields, the defaults and the table in docs/configuration.md; like
// test/unit/errors.test.ts for error codes, this keeps the doc and the code in step both ways.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { RUN_FLAG_NAMES } from '../../../src/cli/flags.js';
import { AGENT_CONFIG_DEFAULTS, loadAgentConfig } from '../../../src/config/agent-config.js';
import { formatDuration } from '../../../src/config/durations.js';
import { CONFIG_FIELDS, scalarFields, type ConfigField, type FieldType } from '../../../src/config/fields.js';
import { ignoredFieldsOf } from '../../../src/config/kubelet-config-file.js';

// A default as the docs show it: a Go duration, a number or an address in backticks, or words.
function formatDefault(type: FieldType): string {
  if (type.kind === 'other') return type.defaultDoc;
  return `\`${type.kind === 'duration' ? formatDuration(type.default) : String(type.default)}\``;
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

  it('the defaults are the scalar fields\' defaults, and what a config without file or flags holds', async () => {
    const { config } = await loadAgentConfig({}, { hostname: () => 'node-a' });
    const scalars = scalarFields();
    assert.deepEqual(Object.keys(AGENT_CONFIG_DEFAULTS).sort(), scalars.map((f) => f.key).sort());
    for (const f of scalars) {
      assert.equal(AGENT_CONFIG_DEFAULTS[f.key as keyof typeof AGENT_CONFIG_DEFAULTS], f.type.default, f.key);
      assert.equal(config[f.key], f.type.default, f.key);
    }
  });

  it('the flags are the table\'s, in its order; scalar flags are addresses or ports', () => {
    assert.deepEqual(RUN_FLAG_NAMES, CONFIG_FIELDS.flatMap((f) => (f.flag ? [`--${f.flag.name}`] : [])));
    for (const f of scalarFields()) {
      if (f.flag !== undefined) assert.ok(f.type.kind === 'address' || f.type.kind === 'port', `--${f.flag.name} has a flag rule`);
    }
  });

  it('the honoured file fields are the table\'s, plus apiVersion and kind', () => {
    const file: Record<string, unknown> = { apiVersion: 'v', kind: 'k', evictionHard: {}, authentication: {} };
    for (const f of CONFIG_FIELDS) if (f.field !== undefined) file[f.field] = 'x';
    assert.deepEqual(ignoredFieldsOf(file), ['authentication', 'evictionHard']);
  });
});
