import { IsomorphicFetchHttpLibrary, ResponseContext, wrapHttpLibrary, type HttpLibrary, type RequestContext } from '@kubernetes/client-node';

/**
 * client-go sends a request again when the API server answers 429 (priority and fairness
 * shedding load) or a 5xx, and says in `Retry-After` how many seconds to wait; up to 10 times.
 * client-node 1.x hands such an answer straight to the caller, so a throttled mirror create
 * surfaced as a failure (a warning, an Event, a backoff) where the kubelet only waits. This
 * HTTP library does what client-go does. The request's deadline (request-timeout.ts) still
 * bounds the whole exchange: once it has passed, the last answer is returned as it is.
 */
export interface RetryAfterOptions {
  /** 10, as client-go. */
  maxRetries?: number;
  /** The HTTP library that sends; client-node's default. */
  inner?: HttpLibrary;
  /** Waits; a test passes a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each wait, for a debug line. */
  onRetry?: (info: { url: string; status: number; seconds: number; attempt: number }) => void;
}

export const DEFAULT_MAX_RETRIES = 10;

/** The whole seconds of a `Retry-After` header, or undefined when it asks for no retry. */
export function retryAfterSeconds(status: number, header: string | undefined): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Number(header);
}

export function createRetryAfterHttpLibrary(options: RetryAfterOptions = {}): HttpLibrary {
  const inner = options.inner ?? new IsomorphicFetchHttpLibrary();
  const maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      for (let attempt = 1; ; attempt++) {
        const response = await inner.send(request).toPromise();
        const seconds = retryAfterSeconds(response.httpStatusCode, response.headers['retry-after']);
        if (seconds === undefined || attempt > maxRetries || request.getSignal()?.aborted) return response;
        // Read the refused answer to the end, so that its keep-alive socket is free again, and
        // keep it: it is the answer if the deadline passes while waiting.
        const text = await response.body.text().catch(() => '');
        options.onRetry?.({ url: request.getUrl(), status: response.httpStatusCode, seconds, attempt });
        await sleep(seconds * 1000);
        if (request.getSignal()?.aborted) {
          return new ResponseContext(response.httpStatusCode, response.headers, { text: async () => text, binary: async () => Buffer.from(text) });
        }
      }
    },
  });
}
