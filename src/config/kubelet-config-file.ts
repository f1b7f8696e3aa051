import { parse as parseYaml } from 'yaml';
import { kpError } from '../errors.js';
import { CONFIG_FIELDS } from './fields.js';

/**
 * The kubelet's configuration file (`--config`): a `kubelet.config.k8s.io/v1beta1`
 * `KubeletConfiguration` in YAML or JSON. Only the fields in the table of src/config/fields.ts
 * are acted on; the others are accepted and reported once, so that a node's existing kubelet
 * file can be used as it is.
 */

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

/** The top-level fields of a decoded file, values as YAML gave them. */
export type KubeletConfigFile = Readonly<Record<string, unknown>>;

const HONOURED_FIELDS: ReadonlySet<string> = new Set([
  'apiVersion',
  'kind',
  ...CONFIG_FIELDS.flatMap((f) => (f.field !== undefined ? [f.field] : [])),
]);

/**
 * Decodes the file's text. Anything but a mapping with the right apiVersion and kind raises
 * `KP_ERR_CONFIG_INVALID` naming `path`; apiVersion and kind problems are reported together.
 */
export function decodeKubeletConfigFile(path: string, text: string): KubeletConfigFile {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw kpError('KP_ERR_CONFIG_INVALID', [path, [`not valid YAML: ${(err as Error).message.split('\n')[0]}`]], {
      cause: err,
    });
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw kpError('KP_ERR_CONFIG_INVALID', [path, ['the file must contain a KubeletConfiguration object']]);
  }
  const obj = doc as Record<string, unknown>;
  const problems: string[] = [];
  if (obj.apiVersion !== KUBELET_CONFIG_API_VERSION) {
    problems.push(`apiVersion: must be ${JSON.stringify(KUBELET_CONFIG_API_VERSION)}, got ${describeValue(obj.apiVersion)}`);
  }
  if (obj.kind !== KUBELET_CONFIG_KIND) {
    problems.push(`kind: must be ${JSON.stringify(KUBELET_CONFIG_KIND)}, got ${describeValue(obj.kind)}`);
  }
  if (problems.length > 0) throw kpError('KP_ERR_CONFIG_INVALID', [path, problems]);
  return obj;
}

/**
 * The fields of `file` that kubelet-pods does not act on, sorted: top-level names, and inside
 * an object some of whose fields are honoured (`authentication`), the paths of the others
 * (`authentication.x509.foo`).
 */
export function ignoredFieldsOf(file: KubeletConfigFile): string[] {
  const ignored: string[] = [];
  const visit = (obj: Readonly<Record<string, unknown>>, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      const path = prefix + k;
      if (HONOURED_FIELDS.has(path)) continue;
      const partly = [...HONOURED_FIELDS].some((f) => f.startsWith(`${path}.`));
      if (partly && v !== null && typeof v === 'object' && !Array.isArray(v)) visit(v as Record<string, unknown>, `${path}.`);
      else ignored.push(path);
    }
  };
  visit(file, '');
  return ignored.sort();
}

/** The log message the agent writes once at start, with the list as the `ignoredFields` field. */
export const IGNORED_FIELDS_MESSAGE = 'kubelet configuration fields ignored by kubelet-pods';

/** The same notice as one line of text, for output that is not a log (undefined when none). */
export function describeIgnoredFields(ignoredFields: readonly string[]): string | undefined {
  if (ignoredFields.length === 0) return undefined;
  return `${IGNORED_FIELDS_MESSAGE}: ${ignoredFields.join(', ')}`;
}

/** What a problem message says was found: a string quoted, anything else by its type only. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : typeof value;
}
