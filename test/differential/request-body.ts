// What a request asked for, read from its body: a DELETE's grace period and preconditions (a
// watch only shows the result, never whether the client sent a UID precondition), and the
// name of the object a POST creates (not in its path). The kubelet's client speaks protobuf,
// our agent JSON, so both encodings are read here.

/** The parts of a DeleteOptions the differential suite compares. */
export interface DeleteRequestOptions {
  /** Undefined: not sent (the server then uses the pod's terminationGracePeriodSeconds). */
  gracePeriodSeconds?: number;
  /** The UID precondition; undefined when none (an empty `preconditions` counts as none). */
  uidPrecondition?: string;
  resourceVersionPrecondition?: string;
  propagationPolicy?: string;
}

/** The 4-byte prefix of Kubernetes' protobuf encoding ("k8s" and a zero byte). */
const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

/**
 * Reads the DeleteOptions of a DELETE from its body (JSON or Kubernetes protobuf) and its
 * query. The API server takes the body when there is one and ignores the query then, so the
 * body wins here too. Returns undefined when the body cannot be read.
 */
export function readDeleteOptions(body: Buffer, contentType: string | undefined, query: URLSearchParams): DeleteRequestOptions | undefined {
  if (body.length === 0) return fromQuery(query);
  if (body.subarray(0, 4).equals(PROTOBUF_MAGIC) || contentType?.startsWith(PROTOBUF_CONTENT_TYPE) === true) {
    return decodeProtobufDeleteOptions(body);
  }
  try {
    return fromJson(JSON.parse(body.toString('utf8')) as unknown);
  } catch {
    return undefined;
  }
}

function fromQuery(query: URLSearchParams): DeleteRequestOptions {
  const out: DeleteRequestOptions = {};
  const grace = query.get('gracePeriodSeconds');
  if (grace !== null && grace !== '') out.gracePeriodSeconds = Number(grace);
  const policy = query.get('propagationPolicy');
  if (policy !== null && policy !== '') out.propagationPolicy = policy;
  return out;
}

function fromJson(value: unknown): DeleteRequestOptions | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const o = value as { gracePeriodSeconds?: unknown; preconditions?: { uid?: unknown; resourceVersion?: unknown }; propagationPolicy?: unknown };
  const out: DeleteRequestOptions = {};
  if (typeof o.gracePeriodSeconds === 'number') out.gracePeriodSeconds = o.gracePeriodSeconds;
  if (typeof o.preconditions?.uid === 'string' && o.preconditions.uid !== '') out.uidPrecondition = o.preconditions.uid;
  if (typeof o.preconditions?.resourceVersion === 'string' && o.preconditions.resourceVersion !== '') {
    out.resourceVersionPrecondition = o.preconditions.resourceVersion;
  }
  if (typeof o.propagationPolicy === 'string') out.propagationPolicy = o.propagationPolicy;
  return out;
}

interface Field {
  number: number;
  /** A varint's value, or a length-delimited field's bytes. */
  value: bigint | Buffer;
}

/** The fields of one protobuf message; other wire types than varint and length-delimited are skipped. */
export function protobufFields(bytes: Buffer): Field[] | undefined {
  const fields: Field[] = [];
  let at = 0;
  const varint = (): bigint | undefined => {
    let result = 0n;
    for (let shift = 0n; at < bytes.length; shift += 7n) {
      const b = bytes[at++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
    return undefined;
  };
  while (at < bytes.length) {
    const key = varint();
    if (key === undefined) return undefined;
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (wireType === 0) {
      const v = varint();
      if (v === undefined) return undefined;
      fields.push({ number, value: v });
    } else if (wireType === 2) {
      const length = varint();
      if (length === undefined || at + Number(length) > bytes.length) return undefined;
      fields.push({ number, value: bytes.subarray(at, at + Number(length)) });
      at += Number(length);
    } else if (wireType === 1) {
      at += 8;
    } else if (wireType === 5) {
      at += 4;
    } else {
      return undefined;
    }
  }
  return at === bytes.length ? fields : undefined;
}

/**
 * The envelope (`runtime.Unknown`: typeMeta = 1, raw = 2) around a DeleteOptions
 * (gracePeriodSeconds = 1, preconditions = 2 {uid = 1, resourceVersion = 2},
 * propagationPolicy = 4), field numbers from apimachinery's generated.proto.
 */
export function decodeProtobufDeleteOptions(body: Buffer): DeleteRequestOptions | undefined {
  if (!body.subarray(0, 4).equals(PROTOBUF_MAGIC)) return undefined;
  const envelope = protobufFields(body.subarray(4));
  const raw = envelope?.find((f) => f.number === 2)?.value;
  if (!(raw instanceof Buffer)) return undefined;
  const fields = protobufFields(raw);
  if (fields === undefined) return undefined;
  const out: DeleteRequestOptions = {};
  for (const f of fields) {
    if (f.number === 1 && typeof f.value === 'bigint') out.gracePeriodSeconds = Number(BigInt.asIntN(64, f.value));
    if (f.number === 4 && f.value instanceof Buffer) out.propagationPolicy = f.value.toString('utf8');
    if (f.number === 2 && f.value instanceof Buffer) {
      for (const p of protobufFields(f.value) ?? []) {
        if (!(p.value instanceof Buffer) || p.value.length === 0) continue;
        if (p.number === 1) out.uidPrecondition = p.value.toString('utf8');
        if (p.number === 2) out.resourceVersionPrecondition = p.value.toString('utf8');
      }
    }
  }
  return out;
}

/** "grace 0, uid precondition" — the words the event sequences use for a DELETE request. */
export function describeDeleteOptions(o: DeleteRequestOptions | undefined): string {
  if (o === undefined) return 'options unreadable';
  const parts = [o.gracePeriodSeconds === undefined ? 'grace default' : `grace ${o.gracePeriodSeconds}`];
  if (o.uidPrecondition !== undefined) parts.push('uid precondition');
  if (o.resourceVersionPrecondition !== undefined) parts.push('resourceVersion precondition');
  return parts.join(', ');
}

/**
 * The `metadata.name` of the object in a create request's body (JSON, or protobuf: the
 * envelope's raw object has metadata = 1 and, inside it, name = 1 for every built-in kind).
 */
export function readObjectName(body: Buffer): string | undefined {
  if (body.subarray(0, 4).equals(PROTOBUF_MAGIC)) {
    const raw = protobufFields(body.subarray(4))?.find((f) => f.number === 2)?.value;
    if (!(raw instanceof Buffer)) return undefined;
    const metadata = protobufFields(raw)?.find((f) => f.number === 1)?.value;
    if (!(metadata instanceof Buffer)) return undefined;
    const name = protobufFields(metadata)?.find((f) => f.number === 1)?.value;
    return name instanceof Buffer ? name.toString('utf8') : undefined;
  }
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { metadata?: { name?: unknown } };
    return typeof parsed.metadata?.name === 'string' ? parsed.metadata.name : undefined;
  } catch {
    return undefined;
  }
}
