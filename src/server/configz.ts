import type { AgentConfig } from '../config/agent-config.js';
import { kubeletConfigurationOf } from '../config/kubelet-configuration.js';
import { send, type Route } from './server.js';

/**
 * `/configz` → `{"kubeletconfig": {…}}`, the kubelet's shape (what its e2e helpers decode):
 * the resolved configuration as KubeletConfiguration v1beta1 fields, secrets redacted.
 */
export function configzRoute(options: { config: AgentConfig }): Route {
  const body = JSON.stringify({ kubeletconfig: kubeletConfigurationOf(options.config) });
  return { path: '/configz', handle: (_req, res) => send(res, 200, 'application/json', body) };
}
