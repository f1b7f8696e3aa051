import type { Pod } from './types.js';

/**
 * The kubelet v1.25 pod manager kept the secret and configmap managers told which pods need
 * which objects, so that they could watch exactly those. These are the two calls it made.
 */
export interface SecretManager {
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
}

export interface ConfigMapManager {
  registerPod(pod: Pod): void;
  unregisterPod(pod: Pod): void;
}
