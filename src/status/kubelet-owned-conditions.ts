/**
 * The pod condition types the kubelet owns. The status writer sends exactly these and compares
 * only these, leaving every other controller's conditions on the mirror alone; the runtime's
 * statuses carry no others. Kept apart from both so that neither has to import the other.
 */
export const KUBELET_OWNED_POD_CONDITIONS: ReadonlySet<string> = new Set([
  'PodScheduled',
  'Ready',
  'Initialized',
  'ContainersReady',
  'PodReadyToStartContainers',
  'DisruptionTarget',
]);
