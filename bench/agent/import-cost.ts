// What our agent's RSS with no pods holds: the memory each dependency adds to a bare Node
// process when imported alone. Each module is imported in a fresh `node --expose-gc` whose ESM
// and CommonJS loaders were already used once (so their own cost is not charged to the first
// module), with a full GC before and after; RSS is VmRSS, the same reading as for the agents.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ImportCost {
  /** The specifier as the agent (or client-node) imports it. */
  module: string;
  what: string;
  /** RSS of the bare process before the import (after its loaders ran), bytes. */
  baseRssBytes: number;
  rssBytes: number;
  /** The RssAnon (private) and RssFile (Node's own code pages touched, shared) parts of rssBytes. */
  anonBytes: number;
  fileBytes: number;
  heapUsedBytes: number;
  /** Committed V8 heap (heapTotal): young generation grown during loading stays committed. */
  heapTotalBytes: number;
  importMs: number;
}

export const IMPORT_TARGETS: ReadonlyArray<{ module: string; what: string }> = [
  { module: '../../src/agent/agent.js', what: 'the whole agent (createAgent and everything it imports)' },
  { module: '@kubernetes/client-node', what: 'client-node 1.x, the package' },
  { module: '@kubernetes/client-node/dist/gen/index.js', what: "client-node's generated API classes and models only" },
  { module: '@kubernetes/client-node/dist/gen/models/ObjectSerializer.js', what: "client-node's model classes and their serializer only" },
  { module: 'node-fetch', what: 'client-node dependency: HTTP' },
  { module: 'ws', what: 'client-node dependency: WebSocket (exec, attach, port-forward)' },
  { module: 'openid-client', what: 'client-node dependency: OIDC auth provider' },
  { module: 'kubernetes-models/v1/Pod', what: 'the Pod schema validator (src/sources/validate.ts)' },
  { module: 'prom-client', what: 'metrics' },
  { module: 'pino', what: 'logging' },
  { module: 'yaml', what: 'manifest parsing' },
];

// Runs in the child: warm both loaders, measure, import, measure; prints one JSON line.
const CHILD = `
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const [target, warmEsm, warmCjs] = process.argv.slice(1);
await import(warmEsm);
createRequire(warmCjs)(warmCjs);
const kb = (status, name) => Number(new RegExp('^' + name + ':\\\\s+(\\\\d+) kB$', 'm').exec(status)[1]) * 1024;
const rss = () => { const s = readFileSync('/proc/self/status', 'utf8'); return { rss: kb(s, 'VmRSS'), anon: kb(s, 'RssAnon'), file: kb(s, 'RssFile') }; };
const settle = async () => { gc(); await new Promise((r) => setTimeout(r, 100)); gc(); };
await settle();
const before = { ...process.memoryUsage(), ...rss() };
const t0 = performance.now();
await import(target);
const importMs = performance.now() - t0;
await settle();
const after = { ...process.memoryUsage(), ...rss() };
console.log(JSON.stringify({ base: before.rss, rss: after.rss - before.rss, anon: after.anon - before.anon, file: after.file - before.file, heapUsed: after.heapUsed - before.heapUsed, heapTotal: after.heapTotal - before.heapTotal, importMs }));
`;

export function measureImportCosts(targets: ReadonlyArray<{ module: string; what: string }> = IMPORT_TARGETS): ImportCost[] {
  // One tiny module of each kind, imported before the baseline reading.
  const warmDir = mkdtempSync(join(tmpdir(), 'kp-import-cost-'));
  const warmEsm = join(warmDir, 'tiny.mjs');
  const warmCjs = join(warmDir, 'tiny.cjs');
  writeFileSync(warmEsm, 'export const tiny = 1;\n');
  writeFileSync(warmCjs, 'module.exports = { tiny: 1 };\n');
  try {
    return measure(targets, pathToFileURL(warmEsm).href, warmCjs);
  } finally {
    rmSync(warmDir, { recursive: true, force: true });
  }
}

function measure(targets: ReadonlyArray<{ module: string; what: string }>, warmEsm: string, warmCjs: string): ImportCost[] {
  const out: ImportCost[] = [];
  for (const { module, what } of targets) {
    let url: string;
    try {
      url = import.meta.resolve(module);
    } catch {
      continue; // a dependency of client-node that is not hoisted: left out
    }
    const line = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, url, warmEsm, warmCjs], { encoding: 'utf8' });
    const r = JSON.parse(line.trim().split('\n').pop()!) as { base: number; rss: number; anon: number; file: number; heapUsed: number; heapTotal: number; importMs: number };
    out.push({ module, what, baseRssBytes: r.base, rssBytes: r.rss, anonBytes: r.anon, fileBytes: r.file, heapUsedBytes: r.heapUsed, heapTotalBytes: r.heapTotal, importMs: Math.round(r.importMs) });
  }
  return out;
}

const mib = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MiB`;

export function importCostTable(costs: readonly ImportCost[]): string {
  const base = costs[0] ? mib(costs[0].baseRssBytes) : '?';
  const lines = [
    `| imported alone into a bare Node process (RSS ${base}) | what | + RSS | of which anon / file | + V8 heap used | + V8 heap committed | import time |`,
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const c of costs) {
    lines.push(`| \`${c.module}\` | ${c.what} | ${mib(c.rssBytes)} | ${mib(c.anonBytes)} / ${mib(c.fileBytes)} | ${mib(c.heapUsedBytes)} | ${mib(c.heapTotalBytes)} | ${c.importMs} ms |`);
  }
  return lines.join('\n');
}
