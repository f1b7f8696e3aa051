package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
)

// writeKubeconfigs writes admin.kubeconfig, scheduler.kubeconfig,
// controller-manager.kubeconfig and one <node>.kubeconfig per node, each with the cluster CA
// embedded and a bearer token, readable only by the owner.
func writeKubeconfigs(dir, server string, caPEM []byte, tokens *tokenSet) error {
	for _, k := range []struct{ file, user, token string }{
		{"admin.kubeconfig", "admin", tokens.admin},
		{"scheduler.kubeconfig", schedulerUser, tokens.scheduler},
		{"controller-manager.kubeconfig", controllerManagerUser, tokens.controllerManager},
	} {
		if err := writeKubeconfig(filepath.Join(dir, k.file), server, caPEM, k.user, k.token); err != nil {
			return err
		}
	}
	for node, tok := range tokens.nodes {
		if err := writeKubeconfig(filepath.Join(dir, node+".kubeconfig"), server, caPEM, "system:node:"+node, tok); err != nil {
			return err
		}
	}
	return nil
}

func writeKubeconfig(path, server string, caPEM []byte, user, token string) error {
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %q
  user:
    token: %s
contexts:
- name: local
  context:
    cluster: local
    user: %q
current-context: local
`, server, base64.StdEncoding.EncodeToString(caPEM), user, token, user)
	return os.WriteFile(path, []byte(content), 0o600)
}
