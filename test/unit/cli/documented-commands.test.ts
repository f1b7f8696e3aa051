// The docs cannot drift from the CLI: every `kubelet-pods <command> …` line in README.md and
// docs/*.md parses with that command's own parser, and every `--flag` they mention is a flag
// of a kubelet-pods command, of one of our Go tools or benchmark runners (read from their
// sources), or one of a short list of other programs' flags, each named with its program.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { SUBCOMMANDS } from '../../../src/cli/commands.js';

const root = new URL('../../../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, root), 'utf8');
const DOCS = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Flags the docs mention that belong to programs other than ours, by program. */
const OTHER_PROGRAMS: Readonly<Record<string, readonly string[]>> = {
  node: [
    '--test',
    '--test-concurrency',
    '--test-force-exit',
    '--expose-gc',
    '--cpu-prof',
    '--cpu-prof-dir',
    '--cpu-prof-interval',
    '--max-semi-space-size',
    '--min-semi-space-size',
    '--no-concurrent-sweeping',
    '--trace-gc',
    '--trace-gc-verbose',
    '--trace-gc-nvp',
    '--trace-gc-ignore-scavenger',
    '--experimental-sea-config',
    // Node's OpenSSL trust store, tried for `run`'s start-up (docs/performance.md, "Restart → Node Ready, 2026-11-27").
    '--use-openssl-ca',
    // V8's, through node: the GC settings measured for large fleets (docs/fleet.md, "Tuning";
    // --heap-growing-percent is also the fleet's own flag, --no-parallel-scavenge the V8 flag
    // behind its parallelScavenge).
    '--single-threaded-gc',
    '--heap-growing-percent',
    '--no-parallel-scavenge',
    '--v8-pool-size',
    // V8's: the young generation's growth, measured for `run` at 100 static pods (docs/performance.md);
    // also the fleet's own flag.
    '--semi-space-growth-factor',
    // V8's, through node: the fleet's GC settings against kwok (docs/performance.md, "RSS against
    // the heap"); --compact-on-every-full-gc is the V8 flag behind the fleet's compactEveryFullGc.
    '--compact-on-every-full-gc',
    '--no-compact-on-every-full-gc',
    '--optimize-for-size',
    '--lite-mode',
    '--max-lazy',
    '--memory-reducer',
    '--memory-reducer-for-small-heaps',
    // V8's: ruled out as the cause of the idle fleet's promotion (docs/performance.md, "The
    // slotted clock in the kwok benchmark, and the headroom against memory"), then found behind
    // the RSS after a wave with growYoungWhileBusy ("Pretenuring after a wave"), with its traces.
    '--no-allocation-site-pretenuring',
    '--trace-pretenuring',
    '--trace-pretenuring-statistics',
    // Node's start-up snapshot, measured for `run`'s start-up (docs/performance.md, "Start and restart → Node Ready").
    '--build-snapshot',
    '--snapshot-blob',
    // V8's, through node: tried against the pod manager benchmark's scatter (docs/performance.md,
    // "Paired, in fresh processes").
    '--hash-seed',
    '--single-threaded',
    // V8's, through node: the decode after a pause (docs/performance.md, "The late mirror after a mass removal").
    '--no-flush-bytecode',
    '--no-flush-baseline-code',
    // V8's, through node: names JavaScript functions for perf's profile of the idle fleet
    // (docs/performance.md, "The idle fleet's last megabytes and its idle CPU").
    '--perf-basic-prof-only-functions',
  ],
  'kube-apiserver': [
    '--endpoint-reconciler-type',
    '--kubelet-client-certificate',
    '--kubelet-client-key',
    '--kubelet-certificate-authority',
    '--kubelet-preferred-address-types',
    // The aggregation layer (docs/control-plane.md).
    '--requestheader-allowed-names',
    '--enable-aggregator-routing',
  ],
  // How metrics-server reaches kubelets (docs/fleet.md, "Per-node endpoints"; test/helpers/metrics-server.ts).
  'metrics-server': ['--kubelet-use-node-status-port', '--kubelet-insecure-tls', '--kubelet-preferred-address-types'],
  // What the control plane gives its scheduler and controller manager (docs/control-plane.md).
  'kube-scheduler': ['--leader-elect', '--bind-address', '--authentication-kubeconfig', '--authorization-kubeconfig', '--authentication-skip-lookup'],
  'kube-controller-manager': [
    '--use-service-account-credentials',
    '--service-account-private-key-file',
    '--root-ca-file',
    '--cluster-signing-cert-file',
    '--cluster-signing-key-file',
    '--node-monitor-grace-period',
  ],
  kubelet: ['--cluster-dns', '--cert-dir'],
  kubectl: ['--raw', '--kubeconfig', '--field-selector', '--force', '--ignore-daemonsets', '--delete-emptydir-data'],
  buildah: ['--storage-driver', '--isolation', '--name'],
  systemctl: ['--now'],
};

/** Flags our own other programs define, read from their sources. */
function toolFlags(): Set<string> {
  const out = new Set<string>();
  for (const tool of ['tools/control-plane/main.go', 'tools/hollow-kubelet/main.go']) {
    for (const m of read(tool).matchAll(/flag\.[A-Za-z0-9]+\([^"\n]*"([a-z][a-z0-9-]*)"/g)) out.add(`--${m[1]}`);
  }
  for (const runner of ['bench/run.ts', 'bench/pod-manager.bench.ts']) {
    for (const m of read(runner).matchAll(/'--([a-z][a-z0-9-]*)/g)) out.add(`--${m[1]}`);
  }
  return out;
}

/** The text of every inline code span and fenced code block of a Markdown file. */
function codeOf(markdown: string): string[] {
  const blocks: string[] = [];
  const withoutFences = markdown.replace(/^```[^\n]*\n([\s\S]*?)^```/gm, (_m, body: string) => {
    blocks.push(body);
    return '';
  });
  for (const m of withoutFences.matchAll(/`([^`]+)`/g)) blocks.push(m[1]!);
  return blocks;
}

interface DocumentedCommand {
  file: string;
  command: string;
  args: string[];
}

/** `kubelet-pods <command> …` lines in code, with `\` continuations joined and `[…]` optional parts kept. */
function documentedCommands(): DocumentedCommand[] {
  const out: DocumentedCommand[] = [];
  for (const file of DOCS) {
    for (const code of codeOf(read(file))) {
      const text = code.replace(/\\\n\s*/g, ' ');
      for (const line of text.split(/\n(?!\[)/)) {
        const m = /(?:^|\s|\$ )kubelet-pods\s+([a-z][a-z-]*)((?:\s+[^\s#|;&]+)*)/.exec(line.replace(/\n/g, ' '));
        if (m === null) continue;
        const args = m[2]!.replace(/[[\]]/g, ' ').split(/\s+/).filter((a) => a !== '');
        out.push({ file, command: m[1]!, args });
      }
    }
  }
  return out;
}

describe('the docs and the CLI', () => {
  const commands = documentedCommands();

  it('finds the documented command lines (the README\'s run and local-cluster at least)', () => {
    assert.ok(commands.some((c) => c.file === 'README.md' && c.command === 'run' && c.args.includes('--kubeconfig')), JSON.stringify(commands));
    assert.ok(commands.some((c) => c.command === 'local-cluster' && c.args.includes('--dir')));
  });

  it('every documented `kubelet-pods <command> …` names a command and parses with its parser', async () => {
    const problems: string[] = [];
    for (const c of commands) {
      const sub = SUBCOMMANDS[c.command];
      if (sub === undefined) {
        problems.push(`${c.file}: unknown command kubelet-pods ${c.command}`);
        continue;
      }
      try {
        (await sub.load()).parse(c.args);
      } catch (err) {
        problems.push(`${c.file}: kubelet-pods ${c.command} ${c.args.join(' ')}: ${(err as Error).message}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('every `--flag` the docs mention exists in a kubelet-pods command, one of our tools, or the named other program', async () => {
    const known = toolFlags();
    for (const sub of Object.values(SUBCOMMANDS)) for (const f of (await sub.load()).flags) known.add(f);
    for (const flags of Object.values(OTHER_PROGRAMS)) for (const f of flags) known.add(f);
    const unknown: string[] = [];
    for (const file of DOCS) {
      for (const code of codeOf(read(file))) {
        for (const m of code.matchAll(/(?:^|[\s[(=])(--[a-z][a-z0-9-]*)/g)) {
          if (!known.has(m[1]!)) unknown.push(`${file}: ${m[1]}`);
        }
      }
    }
    assert.deepEqual([...new Set(unknown)], []);
  });

  it('a flag that does not exist is caught (the check itself works)', async () => {
    const run = await SUBCOMMANDS['run']!.load();
    assert.throws(() => run.parse(['--no-such-flag', 'x']));
    const localCluster = await SUBCOMMANDS['local-cluster']!.load();
    assert.throws(() => localCluster.parse(['--dirr', 'x']));
    assert.doesNotThrow(() => localCluster.parse(['--dir', '<dir>', '--nodes', 'a,b', '--keep-data']));
  });
});
