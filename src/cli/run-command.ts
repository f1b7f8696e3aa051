// `kubelet-pods run`: the node agent. Flags and the KubeletConfiguration file are the kubelet's
// own (docs/configuration.md); it runs until SIGINT or SIGTERM and leaves mirror pods in place.

import { createAgent } from '../agent/agent.js';
import { createLoggerLoaded } from '../logger.js';
import { IGNORED_FIELDS_MESSAGE } from '../config/kubelet-config-file.js';
import { parseRunArgs, resolveRunConfig, RUN_FLAG_NAMES } from './flags.js';
import { applyRunGcSettings } from './run-gc-settings.js';
import { untilSignal } from './signals.js';

export const help = `usage: kubelet-pods run [flags]

Runs the node agent: reads static pods from a manifest directory (--pod-manifest-path) and/or
a manifest URL (--manifest-url), and with --kubeconfig registers the Node, keeps its Lease,
creates and replaces mirror pods and publishes their status, as the kubelet does. Without
--kubeconfig it runs standalone: no API server, no mirror pods.

flags (the kubelet's names; see docs/configuration.md):
  ${RUN_FLAG_NAMES.join('\n  ')}
  -h, --help
`;

export const flags: readonly string[] = [...RUN_FLAG_NAMES, '--help'];

export function parse(args: readonly string[]): unknown {
  return args.includes('--help') || args.includes('-h') ? {} : parseRunArgs(args);
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(help);
    return 0;
  }
  const { config, ignoredFields } = await resolveRunConfig(args);
  const logger = await createLoggerLoaded();
  if (ignoredFields.length > 0) logger.info({ ignoredFields }, IGNORED_FIELDS_MESSAGE);
  const v8Flags = applyRunGcSettings();
  if (v8Flags.length > 0) logger.debug({ v8Flags }, 'garbage collector set for an agent');
  // One node per process: its Node status goes out before the sources start.
  const agent = createAgent({ config, logger, nodeStatusFirst: true });
  await agent.start();
  const signal = await untilSignal();
  logger.info({ signal }, 'stopping');
  await agent.stop();
  return 0;
}
