import { formatDuration } from '../values/go-duration.js';
import type { Behaviour, Scenario, ScenarioMatch } from './scenario-types.js';

/**
 * Scenarios back in the file's form (durations as Go durations, the selector's field names),
 * for `/configz`, which shows the configuration as a file would say it. Reading the result
 * again gives the same scenarios.
 */
export function formatScenarios(scenarios: readonly Scenario[]): Array<Record<string, unknown>> {
  return scenarios.map((s) => {
    const out: Record<string, unknown> = { name: s.name };
    const match = formatMatch(s.match);
    if (Object.keys(match).length > 0) out['match'] = match;
    if (s.fraction !== 1) out['fraction'] = s.fraction;
    const [key, value] = formatBehaviour(s.behaviour);
    out[key] = value;
    return out;
  });
}

function formatMatch(m: ScenarioMatch): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (m.namespaces !== undefined) out['namespace'] = [...m.namespaces];
  if (m.labels !== undefined) out['labels'] = { ...m.labels };
  if (m.owner !== undefined) out['owner'] = { ...m.owner };
  if (m.image !== undefined) out['image'] = m.image;
  if (m.nodes !== undefined) out['node'] = [...m.nodes];
  if (m.nodeLabels !== undefined) out['nodeLabels'] = { ...m.nodeLabels };
  return out;
}

function formatBehaviour(b: Behaviour): [string, unknown] {
  const container = 'container' in b && b.container !== undefined ? { container: b.container } : {};
  switch (b.kind) {
    case 'exit':
      return ['exit', { code: b.exitCode, after: formatDuration(b.afterMs), ...container }];
    case 'oomKill':
      return ['oomKill', { after: formatDuration(b.afterMs), ...container }];
    case 'imagePullFailure':
      return ['imagePullFailure', { ...(b.message !== '' ? { message: b.message } : {}), ...container }];
    case 'startDelay':
      return ['startDelay', formatDuration(b.delayMs)];
    case 'readiness':
      return ['readiness', { ...(b.periodMs !== undefined ? { flapPeriod: formatDuration(b.periodMs) } : {}), message: b.message, ...container }];
    case 'slowStop':
      return ['slowStop', true];
    case 'nodeCondition':
      return ['nodeCondition', { type: b.condition, from: formatDuration(b.fromMs), ...(b.untilMs !== undefined ? { until: formatDuration(b.untilMs) } : {}) }];
  }
}
