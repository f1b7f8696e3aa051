// `kubelet-pods/testing`: doubles for users' tests and ours (an in-memory mirror client, a
// clock driven by hand) and the local control plane: a real kube-apiserver and etcd on
// loopback, built from the Go sources shipped in the package's tools/control-plane.

export { FakeMirrorClient, type FakeMirrorCall } from './mirror/fake-mirror-client.js';
export { FakeClock, settle } from './time/fake-clock.js';
export { startLocalCluster, type LocalCluster, type LocalClusterOptions } from './cluster/local-cluster.js';
export {
  ensureControlPlaneBinary,
  controlPlaneSourceHash,
  defaultCacheRoot,
  CONTROL_PLANE_BINARY_ENV,
  type ControlPlaneBuildOptions,
  type ControlPlaneBinary,
} from './cluster/control-plane-build.js';
