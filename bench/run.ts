// `npm run bench`: runs the Go pod manager benchmark (bench/go, the kubelet's own basicManager)
// and the TS one (bench/pod-manager.bench.ts) on the same workloads, prints a method × size table
// of CPU ns per call with the TS/Go ratio, and writes bench/results/pod-manager.{json,md}.
//
// BENCH_QUICK=1 (or --quick): sizes 100 and 10,000 only with short budgets, for CI; the results
// then go to bench/results/pod-manager-quick.{json,md} so they never overwrite a full run.
// --ts-only skips Go. Without `go` on the PATH the TS figures are reported alone.
// --rounds=N (3 by default, 1 in quick mode) measures every cell N times. In each round and size
// a fresh Go process and a fresh node process build the workload (bench/bench-server.ts), then
// time each method one after the other, which one first alternating: the machine is shared, and
// load that comes and goes would otherwise fall on one side of a ratio only. A cell's ratio is
// the median of its rounds' ratios, shown with their spread.
//
// Then the agent benchmarks (bench/agent/*.bench.ts) on a real local control plane: reaction
// latency, bulk throughput against a client-node ceiling with the QPS check, and memory/CPU;
// then the real kubelet (tools/hollow-kubelet) and our agent side by side on a control plane of
// their own (memory, idle CPU and writes, bursts of 1, 100 and 1,000 manifests; quick mode: up
// to 100, about 2.5 minutes); the fleet (N nodes from one process, then both lifecycle modes);
// and the control plane with and without kube-scheduler and kube-controller-manager; last, kwok
// (tools/kwok) and `kubelet-pods fleet` on the same nodes and pods, each on a fresh control plane
// (bench/agent/kwok.bench.ts); and the fleet at scale, nodes × pods through Ready, Running, an
// idle window and deletion with the control plane's share (bench/agent/fleet-scale.bench.ts); and
// the kubelet's own Lease controller for as many nodes beside the fleet's renewals
// (bench/agent/kubelet-leases.bench.ts).
// They write bench/results/agent-*[-quick].{json,md}.
// --pod-manager-only / --agent-only pick one; --agent=bulk (or latency, resources, side-by-side,
// fleet, fleet-memory, fleet-features, cluster, kwok, fleet-scale, kubelet-leases, comma-separated) runs only
// those agent benchmarks.

import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchServer } from './bench-server.js';
import { budget, METHOD_NAMES, type BenchResult } from './pod-manager.bench.js';
import { AGENT_BENCHES, runAgentBenches, type AgentBenchName } from './agent/run-agent.js';
import { ensurePodManagerOracle } from '../test/helpers/pod-manager-oracle.js';

// Compiled to <outDir>/bench/run.js; the repository root is two levels up from there.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const resultsDir = join(repoRoot, 'bench', 'results');
const tsBenchScript = join(dirname(fileURLToPath(import.meta.url)), 'pod-manager.bench.js');

const quick = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');
const tsOnly = process.argv.includes('--ts-only');
const rounds = roundsArg();

function roundsArg(): number {
  const arg = process.argv.find((a) => a.startsWith('--rounds='));
  if (!arg) return quick ? 1 : 3;
  const n = Number(arg.slice('--rounds='.length));
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--rounds needs a positive integer, got ${arg}`);
    process.exit(2);
  }
  return n;
}

/** `--agent=bulk,latency` runs only those agent benchmarks (all of them by default). */
function agentBenchFilter(): AgentBenchName[] {
  const arg = process.argv.find((a) => a.startsWith('--agent='));
  if (!arg) return [...AGENT_BENCHES];
  const names = arg.slice('--agent='.length).split(',').filter(Boolean);
  const unknown = names.filter((n) => !(AGENT_BENCHES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    console.error(`unknown agent benchmark(s) ${unknown.join(', ')}: choose from ${AGENT_BENCHES.join(', ')}`);
    process.exit(2);
  }
  return names as AgentBenchName[];
}

function goVersion(): string | undefined {
  const r = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function goServeArgs(size: number): string[] {
  const { timeMs, minSamples } = budget(quick);
  return ['-serve', '-sizes', String(size), '-benchtime', `${timeMs(size)}ms`, '-minsamples', String(minSamples(size))];
}

function formatNs(ns: number | undefined): string {
  if (ns === undefined) return '–';
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e4) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${ns.toFixed(ns < 100 ? 1 : 0)} ns`;
}

interface Row {
  method: string;
  size: number;
  /** Medians over the rounds. */
  tsNsPerOp: number;
  goNsPerOp: number | undefined;
  /** Median over the rounds of TS ns/op ÷ Go ns/op, each round's pair timed together: below 1 means TS is faster. */
  ratio: number | undefined;
  /** Lowest and highest TS/Go ratio of a single round (TS and Go of the same round). */
  ratioRange: [number, number] | undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function table(rows: readonly Row[]): string {
  const lines = ['| method | pods | TS ns/op | Go ns/op | TS/Go | TS/Go per round |', '|---|---:|---:|---:|---:|---:|'];
  for (const r of rows) {
    const ratio = r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}${r.ratio > 1 ? ' ⚠' : ''}`;
    const range = r.ratioRange === undefined ? '–' : `${r.ratioRange[0].toFixed(2)}–${r.ratioRange[1].toFixed(2)}`;
    lines.push(
      `| ${r.method} | ${r.size.toLocaleString('en-US')} | ${formatNs(r.tsNsPerOp)} | ${formatNs(r.goNsPerOp)} | ${ratio} | ${range} |`,
    );
  }
  return lines.join('\n');
}

async function podManagerMain(): Promise<void> {
  const started = new Date();
  const loadBefore = loadavg();
  const version = tsOnly ? undefined : goVersion();
  const goResults: BenchResult[][] = [];
  const tsResults: BenchResult[][] = [];
  let goNote: string | undefined;
  let binary: string | undefined;
  if (tsOnly) {
    goNote = 'Go benchmark skipped (--ts-only)';
  } else if (version === undefined) {
    goNote = '`go` was not found on the PATH: reporting TS figures only (install Go ≥ 1.24 to compare)';
  } else {
    // The same program the oracle tests run, built once and cached the same way (with
    // -trimpath, so it shares Go's build cache with the control plane).
    binary = await ensurePodManagerOracle();
  }
  if (goNote) console.error(goNote);

  const { sizes } = budget(quick);
  for (let round = 0; round < rounds; round++) {
    const goRound: BenchResult[] = [];
    const tsRound: BenchResult[] = [];
    for (const size of sizes) {
      console.error(
        `round ${round + 1}/${rounds}, ${size} pods: ${binary === undefined ? '' : `Go (${version}, k8s.io/kubernetes v1.34.4) and `}TS (node ${process.version})${quick ? ' in quick mode' : ''}, method by method…`,
      );
      const go = binary === undefined ? undefined : await BenchServer.start(`Go benchmark at ${size} pods`, binary, goServeArgs(size));
      const ts = await BenchServer.start(`TS benchmark at ${size} pods`, process.execPath, [tsBenchScript, '--serve', `--size=${size}`], {
        ...process.env,
        BENCH_QUICK: quick ? '1' : '0',
      });
      for (const [i, method] of METHOD_NAMES.entries()) {
        // Which side goes first alternates, so neither is always the one timed after the other.
        if (go !== undefined && (i + round) % 2 === 0) goRound.push(await go.time(method));
        tsRound.push(await ts.time(method));
        if (go !== undefined && (i + round) % 2 === 1) goRound.push(await go.time(method));
      }
      await Promise.all([go?.close(), ts.close()]);
    }
    goResults.push(goRound);
    tsResults.push(tsRound);
  }

  const nsOf = (results: readonly BenchResult[][], key: string): number[] =>
    results.flatMap((round) => round.filter((r) => `${r.method}@${r.size}` === key).map((r) => r.nsPerOp));
  const rows: Row[] = [];
  for (const method of METHOD_NAMES) {
    for (const size of sizes) {
      const key = `${method}@${size}`;
      const ts = nsOf(tsResults, key);
      if (ts.length === 0) continue;
      const go = nsOf(goResults, key);
      const perRound = go.length === ts.length ? ts.map((t, i) => t / go[i]!) : [];
      rows.push({
        method,
        size,
        tsNsPerOp: median(ts),
        goNsPerOp: go.length > 0 ? median(go) : undefined,
        ratio: perRound.length > 0 ? median(perRound) : undefined,
        ratioRange: perRound.length > 0 ? [Math.min(...perRound), Math.max(...perRound)] : undefined,
      });
    }
  }

  const cpuList = cpus();
  const machine = {
    cpu: cpuList[0]?.model ?? 'unknown',
    cores: cpuList.length,
    memoryBytes: totalmem(),
    platform: platform(),
    release: release(),
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadavg(),
  };
  const report = {
    benchmark: 'pod-manager',
    date: started.toISOString(),
    quick,
    node: process.version,
    go: version ?? null,
    goSubject: version ? 'k8s.io/kubernetes v1.34.4 pkg/kubelet/pod NewBasicPodManager' : null,
    goNote: goNote ?? null,
    rounds,
    machine,
    rows,
    ts: tsResults,
    goResults,
  };
  const text = table(rows);
  console.log(text);
  const slower = rows.filter((r) => r.ratio !== undefined && r.ratio > 1);
  if (binary !== undefined) {
    console.log(slower.length === 0 ? '\nTS is at least as fast as Go everywhere.' : `\nTS slower than Go in ${slower.length} of ${rows.length} cells (⚠).`);
  }

  mkdirSync(resultsDir, { recursive: true });
  const base = join(resultsDir, quick ? 'pod-manager-quick' : 'pod-manager');
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  const header = [
    `# Pod manager benchmark${quick ? ' (quick mode)' : ''}`,
    '',
    `${started.toISOString()} · node ${process.version} · ${version ?? 'no Go'} · ${machine.cpu} × ${machine.cores} · ` +
      `load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before the run`,
    '',
    'CPU time per call (the process\'s, all threads), lower is better; TS/Go below 1 means the TS PodManager is faster than the kubelet\'s basicManager. ' +
      `Medians of ${rounds} round${rounds === 1 ? '' : 's'}; in each round and size a fresh Go and a fresh node process time each method one right after the other, ` +
      'and a cell\'s TS/Go is the median of its rounds\' ratios; the last column is the lowest and highest of them. Workloads: bench/workload.ts and bench/go/main.go. Regenerate with `npm run bench`.',
    ...(goNote ? ['', `Note: ${goNote}.`] : []),
    '',
  ];
  writeFileSync(`${base}.md`, `${header.join('\n')}${text}\n`);
  console.error(`wrote ${base}.json and ${base}.md`);
}

if (!process.argv.includes('--agent-only')) await podManagerMain();
if (!process.argv.includes('--pod-manager-only')) await runAgentBenches(quick, resultsDir, agentBenchFilter());
