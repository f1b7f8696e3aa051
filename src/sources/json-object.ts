/** A decoded JSON or YAML mapping, before anything is known about its fields. */
export type JsonObject = Record<string, unknown>;

/** True for a mapping; false for null, arrays and scalars (a manifest may hold any of them). */
export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
