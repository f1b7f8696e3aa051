import { kpError } from '../errors.js';

// Option checks shared by the sources' factories: a bad option fails at creation, naming the
// option and what was received.

/** A string option that must not be empty (a path, a URL). */
export function requiredString(value: string | undefined, option: string): string {
  if (!value) throw kpError('KP_ERR_SOURCE_OPTIONS', [option, value === undefined ? 'nothing' : 'an empty string']);
  return value;
}

/** A period in milliseconds: `fallback` when absent, refused unless positive. */
export function periodMs(value: number | undefined, fallback: number, option: string): number {
  const period = value ?? fallback;
  if (!(period > 0)) throw kpError('KP_ERR_SOURCE_OPTIONS', [option, String(period)]);
  return period;
}
