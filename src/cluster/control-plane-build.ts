// The local control plane (tools/control-plane: kube-apiserver + etcd, kube-scheduler and
// kube-controller-manager) as one of the Go tools
// that go-tool-build.ts builds and caches.
import {
  defaultCacheRoot,
  ensureGoTool,
  goSourceHash,
  type GoTool,
  type GoToolBinary,
  type GoToolBuildOptions,
} from './go-tool-build.js';

export { defaultCacheRoot };

/** The file name of the built control-plane program inside its cache directory. */
export const CONTROL_PLANE_BINARY_NAME = 'kube-control-plane';

/**
 * Set this to the path of an already built kube-control-plane to skip the build (for
 * example in a CI image that ships one).
 */
export const CONTROL_PLANE_BINARY_ENV = 'KUBELET_PODS_CONTROL_PLANE';

/**
 * No extra build arguments: the cache key stays the plain source hash it has always been, so
 * a cached control plane survives changes to the build code (a rebuild costs about 11 min).
 */
export const CONTROL_PLANE_TOOL: GoTool = {
  id: 'control-plane',
  binaryName: CONTROL_PLANE_BINARY_NAME,
  title: 'the local control plane (kube-apiserver + etcd, kube-scheduler, kube-controller-manager)',
  binaryEnv: CONTROL_PLANE_BINARY_ENV,
  // `go list -deps` counts 2,422 packages since the scheduler and the controller manager joined.
  approxPackages: 2400,
  firstBuildEstimate: 'about 7-13 minutes on 2 cores',
};

export type ControlPlaneBuildOptions = GoToolBuildOptions;
export type ControlPlaneBinary = GoToolBinary;

/**
 * The control plane's cache key: a hash of every *.go file plus go.mod and go.sum, by name
 * and content (see goSourceHash).
 */
export async function controlPlaneSourceHash(sourceDir: string): Promise<string> {
  return goSourceHash(sourceDir);
}

/**
 * Returns the path of the kube-control-plane program for the current sources, building it
 * only when the cache has none. The first build compiles most of Kubernetes and etcd and
 * takes about 11 minutes on two cores (measured: 10 min 52 s before the scheduler and the
 * controller manager added 387 packages, about a fifth more); later builds of changed sources
 * reuse Go's own build cache and mostly just link.
 */
export async function ensureControlPlaneBinary(options: ControlPlaneBuildOptions = {}): Promise<ControlPlaneBinary> {
  return ensureGoTool(CONTROL_PLANE_TOOL, options);
}
