import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/**
 * The logging surface every part of kubelet-pods takes: pino's, so the agent passes a pino
 * logger (or a child with bound fields) and libraries users embed can pass their own. Calls are
 * `logger.info({ pod, podUID, source, path, url }, 'constant message')`.
 */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child?(bindings: object): Logger;
}

const noop = (): void => {};
export const noopLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * Values that must never reach a log line: bearer tokens, manifest URL headers, kubeconfig
 * credentials. pino removes them wherever they appear under these paths.
 */
export const REDACTED_PATHS = [
  'headers',
  '*.headers',
  'authorization',
  '*.authorization',
  'token',
  '*.token',
  'err.config',
  'err.headers',
  'err.response',
];

export interface CreateLoggerOptions {
  level?: string;
  /** Where JSON lines go; standard error by default so standard output stays for the view. */
  destination?: NodeJS.WritableStream;
}

/** The agent's logger: JSON lines, with secrets redacted. */
export function createLogger(options: CreateLoggerOptions = {}): PinoLogger {
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
    },
    (options.destination ?? process.stderr) as DestinationStream,
  );
}

/** A child logger with `bindings` on every line; silent when no logger was given. */
export function childLogger(logger: Logger | undefined, bindings: object): Logger {
  if (!logger) return noopLogger;
  return logger.child?.(bindings) ?? logger;
}
