import type { AgentConfig } from './types.js';
import { formatDuration } from '../values/go-duration.js';
import { CONFIG_FIELDS } from './fields.js';
import { formatScenarios } from '../scenario/format-scenarios.js';

/** What stands for a secret in the configuration shown (header values of the manifest URL). */
export const REDACTED = '[redacted]';

/**
 * The resolved configuration as a `kubelet.config.k8s.io/v1beta1` KubeletConfiguration, as the
 * kubelet's `/configz` shows its own: the honoured fields under their v1beta1 names and nesting
 * (`authentication.x509.clientCAFile`), durations in Go syntax, fields without a value left
 * out, without `kind` and `apiVersion`, scenarios as the file writes them. Secrets are redacted: every `staticPodURLHeader` value
 * is `[redacted]` (the header names stay).
 */
export function kubeletConfigurationOf(config: AgentConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of CONFIG_FIELDS) {
    if (f.field === undefined) continue;
    let value: unknown = config[f.key];
    if (value === undefined) continue;
    if (f.type.kind === 'duration') value = formatDuration(value as number);
    if (f.key === 'staticPodURLHeader') {
      const headers = value as Readonly<Record<string, readonly string[]>>;
      if (Object.keys(headers).length === 0) continue;
      value = Object.fromEntries(Object.entries(headers).map(([name, values]) => [name, values.map(() => REDACTED)]));
    }
    if (f.key === 'scenarios') {
      const scenarios = value as AgentConfig['scenarios'];
      if (scenarios.length === 0) continue;
      value = formatScenarios(scenarios);
    }
    setPath(out, f.field.split('.'), value);
  }
  return out;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const [head, ...rest] = path;
  if (head === undefined) return;
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  const next = (target[head] ??= {}) as Record<string, unknown>;
  setPath(next, rest, value);
}
