package main

import (
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// tokenSet holds the static bearer tokens the API server accepts: one for an admin in
// system:masters, one per node as system:node:<name> in system:nodes, which is the identity
// the Node authorizer and NodeRestriction recognise, and one each for the scheduler and the
// controller manager as the users Kubernetes' bootstrap ClusterRoleBindings name.
type tokenSet struct {
	file              string
	admin             string
	scheduler         string
	controllerManager string
	nodes             map[string]string
}

const (
	schedulerUser         = "system:kube-scheduler"
	controllerManagerUser = "system:kube-controller-manager"
)

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// ensureTokens reuses tokens already in <dir>/tokens.csv (so a restarted control plane accepts
// the kubeconfigs it wrote before) and adds any node that is new.
func ensureTokens(dir string, nodes []string) (*tokenSet, error) {
	t := &tokenSet{file: filepath.Join(dir, "tokens.csv"), nodes: map[string]string{}}
	users := map[string]string{}
	if f, err := os.Open(t.file); err == nil {
		r := csv.NewReader(f)
		r.FieldsPerRecord = -1
		records, err := r.ReadAll()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", t.file, err)
		}
		for _, rec := range records {
			if len(rec) >= 2 {
				users[rec[1]] = rec[0]
			}
		}
	}
	var err error
	if t.admin = users["admin"]; t.admin == "" {
		if t.admin, err = randomToken(); err != nil {
			return nil, err
		}
	}
	records := [][]string{{t.admin, "admin", "admin", "system:masters"}}
	// No groups: the bootstrap bindings of these two name the users themselves.
	for _, u := range []struct {
		name  string
		token *string
	}{{schedulerUser, &t.scheduler}, {controllerManagerUser, &t.controllerManager}} {
		if *u.token = users[u.name]; *u.token == "" {
			if *u.token, err = randomToken(); err != nil {
				return nil, err
			}
		}
		records = append(records, []string{*u.token, u.name, u.name})
	}
	for _, n := range nodes {
		user := "system:node:" + n
		tok := users[user]
		if tok == "" {
			if tok, err = randomToken(); err != nil {
				return nil, err
			}
		}
		t.nodes[n] = tok
		records = append(records, []string{tok, user, user, "system:nodes"})
	}
	f, err := os.OpenFile(t.file, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := csv.NewWriter(f)
	if err := w.WriteAll(records); err != nil {
		return nil, err
	}
	return t, nil
}
