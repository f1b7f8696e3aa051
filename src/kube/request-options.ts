/**
 * The per-call options the agent passes to a typed API call: only headers, set the way
 * client-node 1.x sets them (`setHeaderOptions('Content-Type', PatchStrategy.MergePatch)`), so
 * that the callers changed nothing but their import lines. The options are a list of
 * middlewares whose `pre` sets headers on the request. They are built as client-node's own
 * are (each `pre` and `post` answers an object with `toPromise()`, appended to the client's
 * middlewares), so they also work with a client-node client handed to the agent (the tests, a
 * library user's `KubeMirrorClient`), and a client-node `setHeaderOptions` works with ours.
 */

/** The Content-Type of each kind of PATCH (client-node 1.x's `PatchStrategy`). */
export const PatchStrategy = {
  /** Diff-like JSON format. */
  JsonPatch: 'application/json-patch+json',
  /** Simple merge. */
  MergePatch: 'application/merge-patch+json',
  /** Merge with different strategies depending on field metadata. */
  StrategicMergePatch: 'application/strategic-merge-patch+json',
  /** Server-Side Apply. */
  ServerSideApply: 'application/apply-patch+yaml',
} as const;
export type PatchStrategy = (typeof PatchStrategy)[keyof typeof PatchStrategy];

/** What a middleware's `pre` may do to a request here: set a header. */
export interface HeaderTarget {
  setHeaderParam(name: string, value: string): void;
}

export interface RequestMiddleware {
  pre?(context: HeaderTarget): unknown;
  post?(response: unknown): unknown;
}

export interface RequestOptions {
  middleware?: RequestMiddleware[];
  middlewareMergeStrategy?: 'append' | 'prepend' | 'replace';
  /**
   * What the caller reads of a successful answer (`AnswerUse`); all of it when unset. Ours
   * only: a client-node client ignores it and answers the whole object, which such callers
   * take as well.
   */
  answerUse?: AnswerUse;
}

/**
 * How much of a successful answer a call's caller reads. An answer to a pod write is the whole
 * pod, several KB of JSON, and parsing what is dropped at once was a large share of the
 * fleet's CPU in a wave of pods (docs/performance.md).
 * - `whole`: the parsed answer.
 * - `resourceVersion`: `{ metadata: { resourceVersion } }` only, read without parsing the rest.
 * - `nothing`: undefined.
 */
export type AnswerUse = 'whole' | 'resourceVersion' | 'nothing';

/** The options with `answerUse` set. */
export function answerUseOptions(answerUse: AnswerUse, opt?: RequestOptions): RequestOptions {
  return { ...opt, answerUse };
}

/** client-node's `of` (its rxjs stand-in): what its clients expect a middleware to answer. */
const of = <T>(value: T): { toPromise(): Promise<T> } => ({ toPromise: () => Promise.resolve(value) });

/** Options that set one header on the request, after those of `opt`. */
export function setHeaderOptions(key: string, value: string, opt?: RequestOptions): RequestOptions {
  const middleware: RequestMiddleware = {
    pre(context) {
      context.setHeaderParam(key, value);
      return of(context);
    },
    post: (response) => of(response),
  };
  return { ...opt, middleware: [...(opt?.middleware ?? []), middleware], middlewareMergeStrategy: 'append' };
}

/** The headers the options set, in order (a later one wins). */
export function headersOf(options: RequestOptions | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  const target: HeaderTarget = { setHeaderParam: (name, value) => void (headers[name] = value) };
  for (const m of options?.middleware ?? []) m.pre?.(target);
  return headers;
}
