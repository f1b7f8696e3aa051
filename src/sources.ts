// `kubelet-pods/sources`: where pods come from, as the kubelet's pkg/kubelet/config has it.
// Decoding and defaulting of manifests, the static pod UID, the file, HTTP and API server
// sources, and PodConfig, which merges them into one stream of pod updates.

export type { PodUpdate, SetDelta, SourceLogger } from './sources/types.js';
export { decodeSinglePod, decodePodList, parseManifestText, type DecodeOutcome, type DefaultFn } from './sources/decode.js';
export { applyStaticPodDefaults, generatePodName, type StaticPodDefaultsOptions } from './sources/defaults.js';
export { applySchemeDefaults, defaultPullPolicy } from './sources/scheme-defaults.js';
export { computeStaticPodUID, type StaticPodOrigin } from './sources/uid.js';
export { validateStaticPodCreate } from './sources/validate.js';
export { isDNS1123Label, isDNS1123Subdomain } from './values/dns-name.js';
export { findApiReferences, checkStaticPodReferences, type ApiReference } from './sources/static-pod-rules.js';
export { parseManifest, parseManifestFile, parseHttpBody, type ManifestOrigin, type ManifestResult } from './sources/manifest.js';
export { createFileSource, type FileSource, type FileSourceOptions, type FileSourceStats } from './sources/file-source.js';
export { createHttpSource, type HttpSource, type HttpSourceOptions } from './sources/http-source.js';
export {
  createApiserverSource,
  type ApiserverSource,
  type ApiserverSourceOptions,
  type ApiserverSourceStats,
} from './sources/apiserver-source.js';
export { kubePodListWatch, type PodListWatch, type WatchEventType } from './sources/pod-list-watch.js';
export { createPodConfig, type PodConfig, type PodConfigMode, type PodConfigOptions, type PodConfigEvent } from './sources/pod-config.js';
export type { SourceChannel } from './sources/mux.js';
export type { UpdateStream } from './sources/update-stream.js';
export { createSourcesReady, type SourcesReady } from './sources/sources-ready.js';
