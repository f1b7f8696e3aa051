// `kubelet-pods/agent`: the node agent behind `kubelet-pods run`, for embedding. createAgent
// wires sources, pod manager, mirror pods, node upkeep, status and endpoints from one resolved
// AgentConfig; the configuration is loaded from the kubelet's flags and KubeletConfiguration
// file as the command does; statuses come from a pluggable provider.

export { createAgent, type Agent, type AgentOptions } from './agent/agent.js';
export {
  loadAgentConfig,
  AGENT_CONFIG_DEFAULTS,
  type AgentConfig,
  type LoadedAgentConfig,
  type LoadAgentConfigOptions,
  type RunFlags,
  type SimulatedLifecycle,
} from './config/agent-config.js';
export {
  describeIgnoredFields,
  KUBELET_CONFIG_API_VERSION,
  KUBELET_CONFIG_KIND,
} from './config/kubelet-config-file.js';
export { parseRunArgs, resolveRunConfig } from './cli/flags.js';
export {
  createSimulatedStatusProvider,
  type SimulatedRuntime,
  type SimulatedStatusProviderOptions,
} from './runtime/simulated-runtime.js';
export { SIMULATION_ANNOTATIONS } from './runtime/simulation-annotations.js';
export type { StatusProvider, ContainerLogLine } from './status/status-provider.js';
export { KUBELET_OWNED_POD_CONDITIONS } from './status/kubelet-owned-conditions.js';
export { createLogger, type Logger, type CreateLoggerOptions } from './logger.js';
export type { BoundAddress } from './server/server.js';
