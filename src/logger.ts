import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import pretty from 'pino-pretty';

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
  /** Where lines go; standard error by default so standard output stays free. */
  destination?: NodeJS.WritableStream;
  /** Human-readable lines instead of JSON; by default when the destination is a terminal. */
  pretty?: boolean;
}

/** The agent's logger: JSON lines (readable ones on a terminal), with secrets redacted. */
export function createLogger(options: CreateLoggerOptions = {}): PinoLogger {
  const destination = options.destination ?? process.stderr;
  const readable = options.pretty ?? (destination as { isTTY?: boolean }).isTTY === true;
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
    },
    readable
      ? pretty({ destination, colorize: true, sync: true, ignore: 'pid,hostname' })
      : (destination as DestinationStream),
  );
}

/**
 * A child logger with `bindings` on every line; silent when no logger was given. The child is
 * made at its first line of an enabled level: a fleet gives each node several (node, lease,
 * status writer, pod workers, sources), about a KiB each in pino, and most never write at the
 * level set (docs/performance.md, "Where the fleet's memory goes").
 */
export function childLogger(logger: Logger | undefined, bindings: object): Logger {
  if (!logger) return noopLogger;
  if (logger.child === undefined) return logger;
  return lazyChild(logger, () => logger.child!(bindings));
}

type Level = 'debug' | 'info' | 'warn' | 'error';

function lazyChild(parent: Logger, make: () => Logger): Logger {
  let made: Logger | undefined;
  const real = (): Logger => (made ??= make());
  // pino answers isLevelEnabled; a logger that does not is asked every time.
  const enabled = (level: Level): boolean => (parent as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true;
  const write =
    (level: Level) =>
    (obj: object, msg?: string): void => {
      if (enabled(level)) real()[level](obj, msg);
    };
  return {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
    child: (more) => lazyChild(parent, () => real().child?.(more) ?? real()),
  };
}
