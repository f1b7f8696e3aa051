// The API server's object name rules (apimachinery's IsDNS1123Label / IsDNS1123Subdomain),
// checked before a name is sent so that a bad one fails at startup with our own error instead
// of as a 422 on every request.

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Node names, pod names: lower-case alphanumerics, '-' and '.', at most 253 characters. */
export function isDNS1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** Namespaces, container and volume names: one such segment without '.', at most 63 characters. */
export function isDNS1123Label(value: string): boolean {
  return value.length <= 63 && DNS1123_LABEL.test(value);
}
