import { HTTP_SOURCE, MAX_CONFIG_LENGTH, PodOperation } from '../constants.js';
import { kpError, type KubeletPodsError } from '../errors.js';
import type { Pod } from '../pod/types.js';
import { decodePodList, decodeSinglePod } from './decode.js';
import { applyStaticPodDefaults } from './defaults.js';
import { checkStaticPodReferences } from './static-pod-rules.js';
import { noopLogger, realTimers, type PodUpdate, type SourceLogger, type SourceTimers } from './types.js';

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
  readonly timers?: SourceTimers;
  /** Defaults to the global fetch (undici). */
  readonly fetch?: typeof fetch;
}

export interface HttpSource {
  /** Polls at once, then httpCheckFrequency after each poll ends. */
  start(): void;
  stop(): void;
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
  private readonly period: number;
  private readonly timeout: number;
  private readonly logger: SourceLogger;
  private readonly timers: SourceTimers;
  private readonly fetchFn: typeof fetch;
  private lastBody: Buffer | undefined;
  private timer: unknown;
  private running = false;
  private failures = 0;
  private controller: AbortController | undefined;
  private terminated = false;

  constructor(private readonly options: HttpSourceOptions) {
    if (!options.url) throw kpError('KP_ERR_SOURCE_OPTIONS', ['url', 'an empty string']);
    this.period = options.httpCheckFrequencyMs ?? 20_000;
    if (!(this.period > 0)) throw kpError('KP_ERR_SOURCE_OPTIONS', ['httpCheckFrequencyMs', String(this.period)]);
    this.timeout = options.timeoutMs ?? 10_000;
    this.logger = options.logger ?? noopLogger;
    this.timers = options.timers ?? realTimers;
    this.fetchFn = options.fetch ?? fetch;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.poll();
  }

  stop(): void {
    this.running = false;
    this.terminated = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.controller?.abort();
  }

  private async poll(): Promise<void> {
    try {
      await this.extractFromURL();
      if (this.failures > 0) this.logger.info({ source: HTTP_SOURCE, url: this.options.url }, 'successfully read pods from URL');
      this.failures = 0;
    } catch (err) {
      if (!this.running) return;
      this.failures++;
      const fields = { source: HTTP_SOURCE, url: this.options.url, err };
      // Like the kubelet: the first failures loudly, then quietly while the URL stays broken.
      if (this.failures <= 3) this.logger.error(fields, 'unable to read pods from URL');
      else if (this.failures === 4) this.logger.error(fields, 'unable to read pods from URL, dropping verbosity');
      else this.logger.debug(fields, 'unable to read pods from URL');
    }
    if (this.running) this.timer = this.timers.setTimeout(() => void this.poll(), this.period);
  }

  async extractFromURL(): Promise<void> {
    const { url } = this.options;
    const headers = new Headers();
    for (const [name, values] of Object.entries(this.options.headers ?? {})) {
      for (const value of values) headers.append(name, value);
    }
    const controller = new AbortController();
    this.controller = controller;
    const deadline = this.timers.setTimeout(() => controller.abort(), this.timeout);
    let status: number;
    let statusText: string;
    let body: Buffer;
    try {
      const response = await this.fetchFn(url, { method: 'GET', headers, signal: controller.signal, redirect: 'follow' });
      status = response.status;
      statusText = response.statusText;
      const read = await readBodyLimited(response);
      if (read === 'too-large') throw kpError('KP_ERR_SOURCE_HTTP_TOO_LARGE', [url, MAX_CONFIG_LENGTH]);
      body = read;
    } catch (err) {
      if (err instanceof Error && 'code' in err && String(err.code).startsWith('KP_ERR_')) throw err;
      throw kpError('KP_ERR_SOURCE_HTTP_FETCH', [url], { cause: err });
    } finally {
      this.timers.clearTimeout(deadline);
      if (this.controller === controller) this.controller = undefined;
    }
    if (status !== 200) throw kpError('KP_ERR_SOURCE_HTTP_STATUS', [url, `${status} ${statusText}`.trim()]);
    if (body.length === 0) {
      this.lastBody = body;
      this.send([]);
      throw kpError('KP_ERR_SOURCE_HTTP_EMPTY', [url]);
    }
    if (this.lastBody && body.equals(this.lastBody)) return;
    // Remembered before parsing: an unparsable body is not parsed again until it changes.
    this.lastBody = body;
    const pods = parseHttpBody(body, url, this.options.nodeName);
    if ('error' in pods) throw pods.error;
    this.send(pods.pods);
  }

  /** A stopped source goes quiet; a one-shot extractFromURL on a never-started source still sends. */
  private send(pods: Pod[]): void {
    if (this.terminated) return;
    this.options.onUpdate({ op: PodOperation.SET, source: HTTP_SOURCE, pods });
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

/**
 * An HTTP body → static pods: a single pod first, then a PodList; both fail ⇒ one error
 * carrying both reasons. Defaults use the URL as the UID salt and add no toleration; every
 * pod must also pass the API-reference rules.
 */
export function parseHttpBody(
  body: Uint8Array | string,
  url: string,
  nodeName: string,
): { readonly pods: Pod[] } | { readonly error: KubeletPodsError } {
  const defaults = (pod: Pod): void => applyStaticPodDefaults(pod, { source: url, isFile: false, nodeName });
  let pods: Pod[];
  const single = decodeSinglePod(body, defaults);
  if (single.kind === 'ok') pods = [single.value];
  else if (single.kind === 'invalid') return { error: single.error };
  else {
    const list = decodePodList(body, defaults);
    if (list.kind === 'invalid') return { error: list.error };
    if (list.kind === 'not-pod') return { error: kpError('KP_ERR_SOURCE_HTTP_PARSE', [url, single.reason, list.reason]) };
    pods = list.value;
  }
  for (const pod of pods) {
    const refError = checkStaticPodReferences(pod, url);
    if (refError) return { error: refError };
  }
  return { pods };
}
