import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';
import type PinoPretty from 'pino-pretty';

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

type Pretty = typeof PinoPretty;
let pretty: Pretty | undefined;

/**
 * The readable lines' formatter (pino-pretty) is loaded only for them: an agent whose logs go
 * to a file or a journal never parses it (docs/performance.md, "Restart → Node Ready,
 * 2026-11-27"). `createLogger` requires it from the package's dependencies when nobody loaded
 * it first; the commands load it with `createLoggerLoaded`, which the bundled command and the
 * single executable need (neither has the package's files beside it).
 */
function prettyNow(): Pretty {
  return (pretty ??= createRequire(import.meta.url)('pino-pretty') as Pretty);
}

function wantsReadable(options: CreateLoggerOptions): boolean {
  return options.pretty ?? ((options.destination ?? process.stderr) as { isTTY?: boolean }).isTTY === true;
}

/** The agent's logger: JSON lines (readable ones on a terminal), with secrets redacted. */
export function createLogger(options: CreateLoggerOptions = {}): PinoLogger {
  const destination = options.destination ?? process.stderr;
  return pino(
    {
      level: options.level ?? 'info',
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      base: undefined,
    },
    wantsReadable(options)
      ? prettyNow()({ destination, colorize: true, sync: true, ignore: 'pid,hostname' })
      : (destination as DestinationStream),
  );
}

/** `createLogger`, with the readable lines' formatter loaded first when they are asked for. */
export async function createLoggerLoaded(options: CreateLoggerOptions = {}): Promise<PinoLogger> {
  if (wantsReadable(options)) pretty ??= (await import('pino-pretty')).default;
  return createLogger(options);
}

/**
 * A child logger with `bindings` on every line; silent when no logger was given. No pino child
 * is made: each line goes to `logger` with the bindings before its own fields. A fleet gives
 * each node several children (node, lease, registration, status writer, pod workers, sources)
 * that write a line or two in their life, and a pino child cost more than those lines
 * (docs/performance.md, "Where the fleet's memory goes").
 */
export function childLogger(logger: Logger | undefined, bindings: object): Logger {
  if (!logger) return noopLogger;
  if (logger.child === undefined) return logger;
  return new BoundChild(logger, bindings, undefined);
}

type Level = 'debug' | 'info' | 'warn' | 'error';

/**
 * Bindings, and the logger that writes. Methods on the prototype, not closures: thousands of
 * these live in a fleet. A field of the line's own wins over a binding of the same name.
 */
class BoundChild implements Logger {
  constructor(
    private readonly root: Logger,
    private readonly bindings: object,
    /** The child this one is a child of, whose bindings come first. */
    private readonly parent: BoundChild | undefined,
  ) {}

  #fields(obj: object): object {
    const outer = this.parent !== undefined ? this.parent.#fields(this.bindings) : this.bindings;
    return { ...outer, ...obj };
  }

  // pino answers isLevelEnabled; a logger that does not is asked every time.
  #write(level: Level, obj: object, msg: string | undefined): void {
    if ((this.root as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true) this.root[level](this.#fields(obj), msg);
  }

  debug(obj: object, msg?: string): void {
    this.#write('debug', obj, msg);
  }
  info(obj: object, msg?: string): void {
    this.#write('info', obj, msg);
  }
  warn(obj: object, msg?: string): void {
    this.#write('warn', obj, msg);
  }
  error(obj: object, msg?: string): void {
    this.#write('error', obj, msg);
  }
  child(bindings: object): Logger {
    return new BoundChild(this.root, bindings, this);
  }
}
