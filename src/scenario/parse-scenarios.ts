import { parseDuration } from '../values/go-duration.js';
import { quantityValue } from '../values/quantity.js';
import { BEHAVIOUR_KEYS, NODE_CONDITIONS, type Behaviour, type Scenario, type ScenarioMatch, type UsageAmount } from './scenario-types.js';

/**
 * The `scenarios:` list of `run`'s configuration file and of the fleet file, checked once: every
 * problem is a line `<path>: <reason>` naming the field (`scenarios[2].match.image: …`), pushed
 * to `problems` as the configuration's other rules do, so that one error lists them all. What
 * is wrong is left out of the result; the rest is kept.
 */

const SCENARIO_FIELDS = new Set(['name', 'match', 'fraction', ...BEHAVIOUR_KEYS]);
const MATCH_FIELDS = new Set(['namespace', 'labels', 'owner', 'image', 'node', 'nodeLabels']);
const NODE_MATCH_FIELDS = new Set(['node', 'nodeLabels']);
const CONTAINER_FIELD = 'container';

/** The default text of a failed pull: the shape a CRI runtime gives a missing image. */
export const DEFAULT_PULL_ERROR = (image: string): string => `rpc error: code = NotFound desc = failed to pull and unpack image ${JSON.stringify(image)}: not found`;
/** The default failure output of a readiness probe: an HTTP probe answered 503. */
export const DEFAULT_PROBE_OUTPUT = 'HTTP probe failed with statuscode: 503';

export function parseScenarios(raw: unknown, at: string, problems: string[]): Scenario[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(`${at}: must be a list of scenarios`);
    return [];
  }
  const out: Scenario[] = [];
  const names = new Map<string, string>();
  raw.forEach((item: unknown, i) => {
    const path = `${at}[${i}]`;
    const scenario = parseScenario(item, path, problems);
    if (scenario === undefined) return;
    const other = names.get(scenario.name);
    if (other !== undefined) {
      problems.push(`${path}.name: ${JSON.stringify(scenario.name)} is also the name of ${other}; names seed the fraction, so each must be unique`);
      return;
    }
    names.set(scenario.name, path);
    out.push(scenario);
  });
  return out;
}

function parseScenario(item: unknown, path: string, problems: string[]): Scenario | undefined {
  if (!isMapping(item)) {
    problems.push(`${path}: must be a mapping`);
    return undefined;
  }
  const before = problems.length;
  for (const key of Object.keys(item)) if (!SCENARIO_FIELDS.has(key)) problems.push(`${path}.${key}: unknown field`);
  // Unnamed, a scenario is named by its place in the list.
  const name = item['name'] === undefined ? path : item['name'];
  if (typeof name !== 'string' || name === '') problems.push(`${path}.name: must be a non-empty string`);
  let fraction = 1;
  if (item['fraction'] !== undefined) {
    const f = item['fraction'];
    if (typeof f !== 'number' || !(f >= 0 && f <= 1)) problems.push(`${path}.fraction: must be a number from 0 to 1, got ${describe(f)}`);
    else fraction = f;
  }
  const given = BEHAVIOUR_KEYS.filter((k) => item[k] !== undefined);
  if (given.length !== 1) {
    problems.push(`${path}: needs exactly one behaviour (${BEHAVIOUR_KEYS.join(', ')}), got ${given.length === 0 ? 'none' : given.join(', ')}`);
    return undefined;
  }
  const key = given[0]!;
  const behaviour = parseBehaviour(key, item[key], `${path}.${key}`, problems);
  const match = parseMatch(item['match'], `${path}.match`, key === 'nodeCondition', problems);
  if (behaviour === undefined || problems.length > before) return undefined;
  return { name: name as string, match, fraction, behaviour };
}

function parseMatch(raw: unknown, path: string, nodesOnly: boolean, problems: string[]): ScenarioMatch {
  if (raw === undefined || raw === null) return {};
  if (!isMapping(raw)) {
    problems.push(`${path}: must be a mapping`);
    return {};
  }
  const match: { -readonly [K in keyof ScenarioMatch]: ScenarioMatch[K] } = {};
  for (const key of Object.keys(raw)) {
    if (!MATCH_FIELDS.has(key)) problems.push(`${path}.${key}: unknown field`);
    else if (nodesOnly && !NODE_MATCH_FIELDS.has(key)) problems.push(`${path}.${key}: a nodeCondition scenario picks nodes: only node and nodeLabels`);
  }
  const namespaces = patterns(raw['namespace'], `${path}.namespace`, problems);
  if (namespaces !== undefined) match.namespaces = namespaces;
  const labels = stringMap(raw['labels'], `${path}.labels`, problems);
  if (labels !== undefined) match.labels = labels;
  if (raw['owner'] !== undefined) {
    const owner = raw['owner'];
    if (!isMapping(owner)) problems.push(`${path}.owner: must be a mapping with kind and name`);
    else {
      for (const key of Object.keys(owner)) if (key !== 'kind' && key !== 'name') problems.push(`${path}.owner.${key}: unknown field`);
      const kind = owner['kind'];
      const name = owner['name'] ?? '*';
      if (typeof kind !== 'string' || kind === '') problems.push(`${path}.owner.kind: must be a kind, such as Deployment`);
      if (typeof name !== 'string' || name === '') problems.push(`${path}.owner.name: must be a name pattern`);
      if (typeof kind === 'string' && kind !== '' && typeof name === 'string' && name !== '') match.owner = { kind, name };
    }
  }
  if (raw['image'] !== undefined) {
    const image = raw['image'];
    if (typeof image !== 'string' || image === '') problems.push(`${path}.image: must be an image pattern, such as "*:broken"`);
    else match.image = image;
  }
  const nodes = patterns(raw['node'], `${path}.node`, problems);
  if (nodes !== undefined) match.nodes = nodes;
  const nodeLabels = stringMap(raw['nodeLabels'], `${path}.nodeLabels`, problems);
  if (nodeLabels !== undefined) match.nodeLabels = nodeLabels;
  return match;
}

function parseBehaviour(key: (typeof BEHAVIOUR_KEYS)[number], raw: unknown, path: string, problems: string[]): Behaviour | undefined {
  switch (key) {
    case 'startDelay': {
      const delayMs = duration(raw, path, problems);
      return delayMs === undefined ? undefined : { kind: 'startDelay', delayMs };
    }
    case 'slowStop':
      if (raw !== true) {
        problems.push(`${path}: must be true, got ${describe(raw)}`);
        return undefined;
      }
      return { kind: 'slowStop' };
    default:
      break;
  }
  // The others are mappings (an empty one, `{}`, takes every default).
  const fields: Record<string, readonly string[]> = {
    exit: ['code', 'after', CONTAINER_FIELD],
    oomKill: ['after', CONTAINER_FIELD],
    imagePullFailure: ['message', CONTAINER_FIELD],
    readiness: ['flapPeriod', 'message', CONTAINER_FIELD],
    usage: ['cpu', 'memory', CONTAINER_FIELD],
    nodeCondition: ['type', 'from', 'until'],
  };
  const m = raw === null ? {} : raw;
  if (!isMapping(m)) {
    problems.push(`${path}: must be a mapping (${fields[key]!.join(', ')})`);
    return undefined;
  }
  const before = problems.length;
  for (const k of Object.keys(m)) if (!fields[key]!.includes(k)) problems.push(`${path}.${k}: unknown field`);
  const container = m[CONTAINER_FIELD] === undefined ? undefined : pattern(m[CONTAINER_FIELD], `${path}.${CONTAINER_FIELD}`, problems);
  const withContainer = container === undefined ? {} : { container };
  const text = (k: string, dflt: string): string => {
    const v = m[k];
    if (v === undefined) return dflt;
    if (typeof v === 'string' && v !== '') return v;
    problems.push(`${path}.${k}: must be a non-empty string`);
    return dflt;
  };
  let out: Behaviour | undefined;
  switch (key) {
    case 'exit': {
      const code = m['code'];
      if (!Number.isInteger(code) || (code as number) < 0 || (code as number) > 255) problems.push(`${path}.code: must be an exit code from 0 to 255, got ${describe(code)}`);
      const afterMs = required(m['after'], `${path}.after`, problems);
      if (afterMs !== undefined) out = { kind: 'exit', exitCode: code as number, afterMs, ...withContainer };
      break;
    }
    case 'oomKill': {
      const afterMs = required(m['after'], `${path}.after`, problems);
      if (afterMs !== undefined) out = { kind: 'oomKill', afterMs, ...withContainer };
      break;
    }
    case 'imagePullFailure':
      // `message` undefined here: the default names the image, known only per container.
      out = { kind: 'imagePullFailure', message: text('message', ''), ...withContainer };
      break;
    case 'readiness': {
      const periodMs = m['flapPeriod'] === undefined ? undefined : duration(m['flapPeriod'], `${path}.flapPeriod`, problems, false);
      out = { kind: 'readiness', message: text('message', DEFAULT_PROBE_OUTPUT), ...(periodMs !== undefined ? { periodMs } : {}), ...withContainer };
      break;
    }
    case 'usage': {
      const cpu = m['cpu'] === undefined ? undefined : usageAmount(m['cpu'], `${path}.cpu`, problems);
      const memory = m['memory'] === undefined ? undefined : usageAmount(m['memory'], `${path}.memory`, problems);
      if (m['cpu'] === undefined && m['memory'] === undefined) problems.push(`${path}: needs cpu or memory (a quantity such as "250m" or "128Mi", or a share of the request such as "80%")`);
      out = { kind: 'usage', ...(cpu !== undefined ? { cpu } : {}), ...(memory !== undefined ? { memory } : {}), ...withContainer };
      break;
    }
    case 'nodeCondition': {
      const type = m['type'] ?? 'NotReady';
      if (typeof type !== 'string' || !(NODE_CONDITIONS as readonly string[]).includes(type)) {
        problems.push(`${path}.type: must be one of ${NODE_CONDITIONS.join(', ')}, got ${describe(type)}`);
      }
      const fromMs = m['from'] === undefined ? 0 : duration(m['from'], `${path}.from`, problems);
      const untilMs = m['until'] === undefined ? undefined : duration(m['until'], `${path}.until`, problems, false);
      if (fromMs !== undefined && untilMs !== undefined && untilMs <= fromMs) problems.push(`${path}.until: must come after from`);
      out = { kind: 'nodeCondition', condition: type as (typeof NODE_CONDITIONS)[number], fromMs: fromMs ?? 0, ...(untilMs !== undefined ? { untilMs } : {}) };
      break;
    }
  }
  return problems.length > before ? undefined : out;
}

/**
 * A usage as the scenarios and the usage annotation write it: a quantity (`250m`, `1`,
 * `128Mi`) or a percentage of the request (`80%`); undefined when it is neither.
 */
export function parseUsageAmount(text: string): UsageAmount | undefined {
  if (text.endsWith('%')) {
    const percent = Number(text.slice(0, -1));
    return text.length > 1 && Number.isFinite(percent) && percent >= 0 ? { ofRequest: percent / 100 } : undefined;
  }
  const value = text === '' ? Number.NaN : quantityValue(text);
  return Number.isFinite(value) && value >= 0 ? { amount: value } : undefined;
}

/** A scenario's usage amount (a number is a quantity), or a problem at `path`. */
function usageAmount(v: unknown, path: string, problems: string[]): UsageAmount | undefined {
  const amount = parseUsageAmount(typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : '');
  if (amount !== undefined) return amount;
  problems.push(`${path}: must be a quantity (such as "250m" or "128Mi") or a share of the request (such as "80%"), got ${describe(v)}`);
  return undefined;
}

function required(v: unknown, path: string, problems: string[]): number | undefined {
  if (v === undefined) {
    problems.push(`${path}: a duration is needed, such as "30s"`);
    return undefined;
  }
  return duration(v, path, problems);
}

/** A Go duration string, 0 or more (more than 0 unless `allowZero`), as milliseconds. */
function duration(v: unknown, path: string, problems: string[], allowZero = true): number | undefined {
  let ms: number | undefined;
  if (typeof v === 'string') {
    try {
      ms = parseDuration(v);
    } catch {
      ms = undefined;
    }
  }
  if (ms === undefined || ms < 0 || (!allowZero && ms === 0)) {
    problems.push(`${path}: must be a duration${allowZero ? '' : ' above 0'}, such as "30s" or "1m30s", got ${describe(v)}`);
    return undefined;
  }
  return ms;
}

/** One pattern or a list of them. */
function patterns(v: unknown, path: string, problems: string[]): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = Array.isArray(v) ? v : [v];
  if (list.length === 0) {
    problems.push(`${path}: must name at least one pattern`);
    return undefined;
  }
  const out = list.map((p: unknown, i) => pattern(p, Array.isArray(v) ? `${path}[${i}]` : path, problems));
  return out.every((p): p is string => p !== undefined) ? out : undefined;
}

function pattern(v: unknown, path: string, problems: string[]): string | undefined {
  if (typeof v === 'string' && v !== '') return v;
  problems.push(`${path}: must be a name or a pattern with * (a non-empty string), got ${describe(v)}`);
  return undefined;
}

function stringMap(v: unknown, path: string, problems: string[]): Record<string, string> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isMapping(v)) {
    problems.push(`${path}: must be a mapping of label names to values`);
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== 'string') problems.push(`${path}.${k}: must be a string (quote numbers and booleans), got ${describe(val)}`);
    else out[k] = val;
  }
  return out;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (v === null) return 'null';
  return Array.isArray(v) ? 'a list' : typeof v;
}

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
