// The static pod manifest the integration tests, the reliability suite and the agent
// benchmarks write: one container, labelled with its name.

export function podManifestYaml(name: string, namespace: string, image = 'nginx:1.27'): string {
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${namespace}
  labels:
    app: ${name}
spec:
  containers:
  - name: main
    image: ${image}
`;
}
