// The option parsing every subcommand but `run` shares (`run` takes the kubelet's flags, see
// flags.ts): node's parseArgs, strict, no positionals, and a usage error from the registry.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { kpError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The flags of an options table, with their dashes, for SubcommandModule.flags. */
export function flagNames(options: Options): readonly string[] {
  return Object.keys(options).map((name) => `--${name}`);
}

/** What parseCommandOptions returns for `options` (named, so that declarations can be emitted). */
export type ParsedCommandOptions<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>>;

/** Parses `args` against `options`; an unknown flag or a missing value is KP_ERR_CLI_USAGE. */
export function parseCommandOptions<const O extends Options>(options: O, args: readonly string[]): ParsedCommandOptions<O> {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: false });
  } catch (err) {
    throw kpError('KP_ERR_CLI_USAGE', [err instanceof Error ? err.message : String(err)], { cause: err });
  }
}
