// Builds, one after the other, the Go programs the integration tests start (the control plane,
// the hollow kubelet, metrics-server, the pod manager oracle), before `npm test` runs the test
// files two at a time: otherwise two files starting together on a fresh machine would each
// build the same program. Each is cached after its first build, so on later runs this only
// checks the cache.
import { ensureControlPlaneBinary } from '../../src/cluster/control-plane-build.js';
import { ensureGoTool } from '../../src/cluster/go-tool-build.js';
import { ensureHollowKubeletBinary } from './hollow-kubelet.js';
import { METRICS_SERVER_TOOL } from './metrics-server.js';
import { ensurePodManagerOracle } from './pod-manager-oracle.js';

const started = performance.now();
await ensureControlPlaneBinary();
await ensureHollowKubeletBinary();
await ensureGoTool(METRICS_SERVER_TOOL);
await ensurePodManagerOracle();
process.stderr.write(`the integration tests' Go programs are built (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
