/**
 * client-go sends a request again when the API server answers 429 (priority and fairness
 * shedding load) or a 5xx, and says in `Retry-After` how many seconds to wait; up to 10 times.
 * client-node 1.x handed such an answer straight to the caller, so a throttled mirror create
 * surfaced as a failure (a warning, an Event, a backoff) where the kubelet only waits. Our
 * transport (src/kube/api-transport.ts) does what client-go does. The request's deadline
 * (request-timeout.ts) still bounds the whole exchange: once it has passed, the last answer is
 * returned as it is.
 */
export const DEFAULT_MAX_RETRIES = 10;

/** The whole seconds of a `Retry-After` header, or undefined when it asks for no retry. */
export function retryAfterSeconds(status: number, header: string | undefined): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  if (header === undefined || !/^\s*\d+\s*$/.test(header)) return undefined;
  return Number(header);
}

export interface RetryLoopOptions<R> {
  maxRetries: number;
  sleep: (ms: number) => Promise<void>;
  /** True once the call's deadline has passed: no more waiting, the last answer stands. */
  expired: () => boolean;
  /** The status and Retry-After header of an answer. */
  answer: (response: R) => { status: number; retryAfter: string | undefined };
  /** Runs before each wait, with the refused answer (to read its body, to log). */
  beforeWait?: (response: R, seconds: number, attempt: number) => Promise<void>;
}

/**
 * The retry rule above on any transport: sends, and while the answer asks to be retried, the
 * retries allow and the deadline has not passed, waits the seconds asked and sends again.
 * Returns the last answer. The API transport (src/kube/api-transport.ts) sends through it.
 */
export async function sendRetryingAfter<R>(send: () => Promise<R>, options: RetryLoopOptions<R>): Promise<R> {
  let response = await send();
  for (let attempt = 1; attempt <= options.maxRetries && !options.expired(); attempt++) {
    const { status, retryAfter } = options.answer(response);
    const seconds = retryAfterSeconds(status, retryAfter);
    if (seconds === undefined) break;
    await options.beforeWait?.(response, seconds, attempt);
    await options.sleep(seconds * 1000);
    if (options.expired()) break;
    response = await send();
  }
  return response;
}
