import { HTTP_SOURCE, MAX_CONFIG_LENGTH, PodOperation } from '../constants.js';
import { hasErrorCode, kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { realClock, type Clock, type ClockTimer } from '../time/clock.js';
import { parseHttpBody } from './manifest.js';
import { periodMs, requiredString } from './source-options.js';
import { noopLogger, type PodUpdate, type SourceLogger } from './types.js';

export interface HttpSourceOptions {
  /** staticPodURL. */
  readonly url: string;
  readonly nodeName: string;
  readonly onUpdate: (update: PodUpdate) => void;
  /** staticPodURLHeader: every value of every header is sent. Values are never logged. */
  readonly headers?: Readonly<Record<string, readonly string[]>>;
  /** Pause between the end of one poll and the start of the next, default 20 s. */
  readonly httpCheckFrequencyMs?: number;
  /** Whole-request timeout, default 10 s. */
  readonly timeoutMs?: number;
  readonly logger?: SourceLogger;
  /**
   * Called when a body is refused (not a pod or pod list, invalid, referencing API objects),
   * once per content of the body, as it is logged: the agent records an event.
   */
  readonly onRejected?: (url: string, error: KubeletPodsError) => void;
  /** Poll period and request timeout; the real clock by default. */
  readonly clock?: Clock;
  /** Defaults to the global fetch (undici). */
  readonly fetch?: typeof fetch;
}

export interface HttpSource {
  /**
   * Polls at once, then httpCheckFrequency after each poll ends. After stop(), start() begins
   * again: its first successful poll sends the set, changed or not.
   */
  start(): void;
  /** Stops polling and aborts the request in flight; resolves once that poll ended. Nothing is sent after it. */
  stop(): Promise<void>;
  /** One poll (the kubelet's extractFromURL): sends a SET when there is news, rejects on failure. */
  extractFromURL(): Promise<void>;
}

/**
 * Polls a URL serving one pod or a v1 PodList (the way k0s and Talos feed their kubelets).
 *
 * - transport error, timeout, non-200, body over 10 MiB: nothing sent, state kept;
 * - empty 200 body: SET [] and an error;
 * - body byte-identical to the previous one: nothing at all (not even re-parsed), so a bad
 *   body is reported once, not on every poll;
 * - else single pod, then pod list; one invalid list item rejects the whole list.
 * Errors name the URL, never header values or the body.
 */
export function createHttpSource(options: HttpSourceOptions): HttpSource {
  return new HttpSourceImpl(options);
}

class HttpSourceImpl implements HttpSource {
  readonly #options: HttpSourceOptions;
  readonly #period: number;
  readonly #timeout: number;
  readonly #logger: SourceLogger;
  readonly #clock: Clock;
  readonly #fetch: typeof fetch;
  #lastBody: Buffer | undefined;
  #timer: ClockTimer | undefined;
  /** `new`: never started (a one-shot extractFromURL still sends); `stopped`: sends nothing. */
  #state: 'new' | 'running' | 'stopped' = 'new';
  #failures = 0;
  #controller: AbortController | undefined;
  /** The poll in progress, if any: stop() waits for it. */
  #polling: Promise<void> | undefined;
  /** Counts start() calls, so that a poll begun before a stop and restart ends its chain. */
  #generation = 0;

  constructor(options: HttpSourceOptions) {
    requiredString(options.url, 'url');
    this.#period = periodMs(options.httpCheckFrequencyMs, 20_000, 'httpCheckFrequencyMs');
    this.#timeout = periodMs(options.timeoutMs, 10_000, 'timeoutMs');
    this.#options = options;
    this.#logger = options.logger ?? noopLogger;
    this.#clock = options.clock ?? realClock;
    this.#fetch = options.fetch ?? fetch;
  }

  start(): void {
    if (this.#state === 'running') return;
    this.#state = 'running';
    // Whoever listens may have lost what was sent before a stop: the next body is news.
    this.#lastBody = undefined;
    this.#failures = 0;
    this.#generation += 1;
    this.#runPoll(this.#generation);
  }

  async stop(): Promise<void> {
    this.#state = 'stopped';
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#controller?.abort();
    await this.#polling;
  }

  #runPoll(generation: number): void {
    const poll = this.#poll(generation);
    this.#polling = poll;
    void poll.finally(() => {
      if (this.#polling === poll) this.#polling = undefined;
    });
  }

  /** One poll, then the next one scheduled, for as long as this start() is the current one. */
  async #poll(generation: number): Promise<void> {
    const { url } = this.#options;
    const current = (): boolean => this.#state === 'running' && this.#generation === generation;
    try {
      await this.extractFromURL();
      if (this.#failures > 0) this.#logger.info({ source: HTTP_SOURCE, url }, 'successfully read pods from URL');
      this.#failures = 0;
    } catch (err) {
      if (!current()) return;
      this.#failures++;
      const fields = { source: HTTP_SOURCE, url, err };
      // Like the kubelet: the first failures loudly, then quietly while the URL stays broken.
      if (this.#failures <= 3) this.#logger.error(fields, 'unable to read pods from URL');
      else if (this.#failures === 4) this.#logger.error(fields, 'unable to read pods from URL, dropping verbosity');
      else this.#logger.debug(fields, 'unable to read pods from URL');
    }
    if (current()) {
      this.#timer = this.#clock.setTimeout(() => {
        this.#timer = undefined;
        this.#runPoll(generation);
      }, this.#period);
    }
  }

  async extractFromURL(): Promise<void> {
    const { url } = this.#options;
    const headers = new Headers();
    for (const [name, values] of Object.entries(this.#options.headers ?? {})) {
      for (const value of values) headers.append(name, value);
    }
    const controller = new AbortController();
    this.#controller = controller;
    const deadline = this.#clock.setTimeout(() => controller.abort(), this.#timeout);
    let status: number;
    let statusText: string;
    let body: Buffer;
    try {
      const response = await this.#fetch(url, { method: 'GET', headers, signal: controller.signal, redirect: 'follow' });
      status = response.status;
      statusText = response.statusText;
      const read = await readBodyLimited(response);
      if (read === 'too-large') throw kpError('KP_ERR_SOURCE_HTTP_TOO_LARGE', [url, MAX_CONFIG_LENGTH]);
      body = read;
    } catch (err) {
      if (hasErrorCode(err, 'KP_ERR_SOURCE_HTTP_TOO_LARGE')) throw err;
      throw kpError('KP_ERR_SOURCE_HTTP_FETCH', [url], { cause: err });
    } finally {
      this.#clock.clearTimeout(deadline);
      if (this.#controller === controller) this.#controller = undefined;
    }
    if (status !== 200) throw kpError('KP_ERR_SOURCE_HTTP_STATUS', [url, `${status} ${statusText}`.trim()]);
    if (body.length === 0) {
      this.#lastBody = body;
      this.#send([]);
      throw kpError('KP_ERR_SOURCE_HTTP_EMPTY', [url]);
    }
    if (this.#lastBody && body.equals(this.#lastBody)) return;
    // Remembered before parsing: an unparsable body is not parsed again until it changes.
    this.#lastBody = body;
    const result = parseHttpBody(body, url, this.#options.nodeName);
    if ('error' in result) {
      this.#options.onRejected?.(url, result.error);
      throw result.error;
    }
    this.#send(result.pods);
  }

  #send(pods: Pod[]): void {
    if (this.#state === 'stopped') return;
    this.#options.onUpdate({ op: PodOperation.SET, source: HTTP_SOURCE, pods });
  }
}

async function readBodyLimited(response: Response): Promise<Buffer | 'too-large'> {
  const length = Number(response.headers.get('content-length') ?? NaN);
  if (length > MAX_CONFIG_LENGTH) {
    await response.body?.cancel();
    return 'too-large';
  }
  if (!response.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_CONFIG_LENGTH) {
      await reader.cancel();
      return 'too-large';
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}
