import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadAgentConfig, type LoadAgentConfigOptions, type LoadedAgentConfig, type RunFlags } from '../config/agent-config.js';
import { CONFIG_FIELDS } from '../config/fields.js';
import { kpError } from '../errors.js';

/**
 * The kubelet's flags as `kubelet-pods run` takes them: the flags of the configuration table
 * (src/config/fields.ts), all string-valued, `--manifest-url-header` repeatable.
 */

// Boolean flags take `--flag` (true) or `--flag=false`, as Go's boolean flags do, unless the
// table says the flag takes a value.
const FLAGS = CONFIG_FIELDS.flatMap((f) => (f.flag !== undefined ? [{ ...f.flag, boolean: f.type.kind === 'boolean' && f.type.flagTakesValue !== true }] : []));

const FLAG_SPEC: NonNullable<ParseArgsConfig['options']> = Object.fromEntries(
  FLAGS.map((flag) => [flag.name, { type: flag.boolean ? 'boolean' : 'string', multiple: flag.multiple === true }]),
);
const BOOLEAN_FLAGS: ReadonlySet<string> = new Set(FLAGS.filter((f) => f.boolean).map((f) => f.name));

/** The flag names `parseRunArgs` accepts, for the CLI's help text. */
export const RUN_FLAG_NAMES: readonly string[] = Object.freeze(FLAGS.map((flag) => `--${flag.name}`));

/**
 * Parses the arguments after `run` (`--flag value` and `--flag=value` both work). Unknown
 * flags, positional arguments and flags without a value are all reported at once in a
 * `KP_ERR_CONFIG_FLAGS` error.
 */
export function parseRunArgs(argv: readonly string[]): RunFlags {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: FLAG_SPEC, strict: false, allowPositionals: true, tokens: true });
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_FLAGS', [[(err as Error).message]], { cause: err });
  }
  const problems: string[] = [];
  for (const token of parsed.tokens) {
    if (token.kind === 'positional') {
      problems.push(`unexpected argument ${JSON.stringify(token.value)}`);
    } else if (token.kind === 'option') {
      if (!(token.name in FLAG_SPEC)) problems.push(`unknown flag ${token.rawName}`);
      else if (BOOLEAN_FLAGS.has(token.name)) continue;
      else if (token.value === undefined) problems.push(`flag ${token.rawName} needs a value`);
      // `--kubeconfig --config=x` would otherwise take the next flag as the value.
      else if (token.inlineValue === false && token.value.startsWith('--')) {
        problems.push(`flag ${token.rawName} needs a value (got the flag ${token.value.split('=')[0]})`);
      }
    }
  }
  if (problems.length > 0) throw kpError('KP_ERR_CONFIG_FLAGS', [problems]);
  const flags: Record<string, string | string[]> = {};
  for (const flag of FLAGS) {
    const value: unknown = parsed.values[flag.name];
    if (flag.multiple === true) {
      if (Array.isArray(value)) flags[flag.key] = value.filter((v): v is string => typeof v === 'string');
    } else if (typeof value === 'string') {
      flags[flag.key] = value;
    } else if (value === true) {
      flags[flag.key] = 'true';
    }
  }
  return Object.freeze(flags) as RunFlags;
}

/** `parseRunArgs` then `loadAgentConfig`: what `kubelet-pods run <args>` needs. */
export async function resolveRunConfig(argv: readonly string[], options: LoadAgentConfigOptions = {}): Promise<LoadedAgentConfig> {
  return loadAgentConfig(parseRunArgs(argv), options);
}
