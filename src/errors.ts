/**
 * The error registry: every error kubelet-pods raises is built here from a stable code and a
 * message template. Callers branch on `code`, never on message text. Every code is documented
 * in docs/errors.md (a unit test keeps the two in step).
 *
 * Messages start lower-case, name the object (path, URL, full name or UID, quoted) and never
 * contain header values, tokens or response bodies.
 */

const quote = (s: string): string => JSON.stringify(s);

const templates = {
  KP_ERR_POD_FULL_NAME: (input: string) => `failed to parse the pod full name ${quote(input)}`,
  KP_ERR_POD_SOURCE: (uid: string) => `cannot get source of pod ${quote(uid)}`,
  KP_ERR_SOURCE_UNKNOWN: (source: string) => `unknown pod source ${quote(source)}`,
  KP_ERR_NO_MIRROR_CLIENT: (method: string) =>
    `${method}: this pod manager was created without a mirror client (pass { mirrorClient } to new PodManager)`,
  KP_ERR_METRIC_REGISTERED: (name: string) =>
    `metric ${quote(name)} is already registered in this registry: give each PodManager its own registry`,
  // --- sources ---
  // --- cluster and mirror client ---
  // --- agent ---
} satisfies Record<string, (...args: never[]) => string>;

export type ErrorCode = keyof typeof templates;

/** All codes, for the docs cross-check. */
export const ERROR_CODES = Object.keys(templates) as ErrorCode[];

export class KubeletPodsError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeletPodsError';
    this.code = code;
  }
}

/** Builds the registered error `code` with its template's arguments. */
export function kpError<C extends ErrorCode>(
  code: C,
  args: Parameters<(typeof templates)[C]>,
  options?: { cause?: unknown },
): KubeletPodsError {
  const template = templates[code] as (...a: Parameters<(typeof templates)[C]>) => string;
  return new KubeletPodsError(code, template(...args), options);
}

export function hasErrorCode(err: unknown, code: ErrorCode): err is KubeletPodsError {
  return err instanceof KubeletPodsError && err.code === code;
}
