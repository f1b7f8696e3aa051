// kubelet-pods/testing: test doubles for users' tests and ours.
export { FakeMirrorClient, type FakeMirrorCall } from './mirror/fake-mirror-client.js';
export { FakeClock, settle } from './time/fake-clock.js';
