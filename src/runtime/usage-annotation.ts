import type { Pod } from '../pod/types.js';
import { parseUsageAmount } from '../scenario/parse-scenarios.js';
import type { UsageAmount } from '../scenario/scenario-types.js';
import { SIMULATION_ANNOTATIONS } from './simulation-annotations.js';


/** What the annotation asks of one container; a resource left out keeps the default. */
export interface UsageEntry {
  readonly cpu?: UsageAmount;
  readonly memory?: UsageAmount;
}

export interface UsagePlan {
  /** By container name; `*` for every container not named. */
  readonly entries: ReadonlyMap<string, UsageEntry>;
  /** The entries that could not be read, each with why (they are left out). */
  readonly problems: readonly string[];
}

const EMPTY: UsagePlan = { entries: new Map(), problems: [] };

/**
 * The pod's `simulation.kubelet-pods.io/usage` annotation: `<container>=<cpu>/<memory>`,
 * comma-separated, where each side is a quantity (`250m`, `1`, `128Mi`) or a percentage of
 * the container's request (`80%`), and may be empty. A malformed entry is left out and named
 * in `problems`; the others apply.
 */
export function usagePlan(pod: Pod): UsagePlan {
  const raw = pod.metadata?.annotations?.[SIMULATION_ANNOTATIONS.usage];
  if (raw === undefined || raw.trim() === '') return EMPTY;
  const entries = new Map<string, UsageEntry>();
  const problems: string[] = [];
  for (const item of raw.split(',')) {
    const text = item.trim();
    const m = /^([^=\s]+)=([^/]*)\/([^/]*)$/.exec(text);
    if (m === null) {
      problems.push(`${JSON.stringify(text)}: expected <container>=<cpu>/<memory>`);
      continue;
    }
    const cpu = readAmount(m[2]!.trim(), 'cpu');
    const memory = readAmount(m[3]!.trim(), 'memory');
    const bad = [cpu, memory].filter((r): r is { problem: string } => r !== undefined && 'problem' in r);
    if (bad.length > 0) {
      problems.push(`${JSON.stringify(text)}: ${bad.map((b) => b.problem).join('; ')}`);
      continue;
    }
    entries.set(m[1]!, { ...(cpu !== undefined ? { cpu: cpu as UsageAmount } : {}), ...(memory !== undefined ? { memory: memory as UsageAmount } : {}) });
  }
  return { entries, problems };
}

function readAmount(text: string, resource: 'cpu' | 'memory'): UsageAmount | { problem: string } | undefined {
  if (text === '') return undefined;
  return parseUsageAmount(text) ?? { problem: `${resource} ${JSON.stringify(text)} is not a ${text.endsWith('%') ? 'percentage' : 'quantity'}` };
}
