// A process that holds only a fleet (and a thin IPC shim, fleet-child-body.ts), so that its RSS,
// heap and CPU are the fleet's. Forked by the fleet benchmarks (fleet.bench.ts, fleet-process.ts,
// fleet-memory.bench.ts and others) with { kubeconfig, manifestDir, nodes, prefix,
// simulatedLifecycle? } as argv[2] (fleet-memory.bench.ts leaves manifestDir out: nodes without
// static pods; sets `log`, for the loggers `kubelet-pods fleet` makes, writing to /dev/null; and
// may ask for heap snapshots, written into snapshotDir).
//
// This entry holds the young generation at its starting size, then loads the fleet, as the
// `fleet` command's loader does (src/cli/commands.ts). A static import of the fleet
// would be too late: node loads and compiles a module's whole graph before it runs any of it,
// and that alone grew the young generation past what the command's fleet ever has
// (docs/performance.md, "The fleet memory benchmark's young generation").
import { holdYoungGeneration } from '../../src/fleet/gc-settings.js';

holdYoungGeneration();
await import('./fleet-child-body.js');
