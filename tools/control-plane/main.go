// Command kube-control-plane runs a real etcd and a real kube-apiserver (Kubernetes v1.34) on
// loopback, secured the way a production cluster secures its kubelets: static tokens for an
// admin and one identity per node, Node,RBAC authorization and the NodeRestriction admission
// plugin. kubelet-pods' integration tests, benchmarks and demo start it through
// `kubelet-pods local-cluster`; nothing here is shipped in the npm package.
//
// It writes admin.kubeconfig and <node>.kubeconfig into --dir, prints one JSON line on stdout
// once /readyz answers ok, and on SIGINT/SIGTERM stops both servers and removes its temporary
// data (unless --keep-data, used by tests that restart the control plane in place).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

type options struct {
	dir        string
	nodes      []string
	securePort int
	etcdPort   int
	keepData   bool
}

func parseOptions() (options, error) {
	var o options
	var nodes string
	flag.StringVar(&o.dir, "dir", "", "state directory for kubeconfigs, certificates and tokens (required)")
	flag.StringVar(&nodes, "nodes", "node-1", "comma-separated node names that get their own credentials")
	flag.IntVar(&o.securePort, "secure-port", 0, "kube-apiserver port on 127.0.0.1 (0 picks a free one)")
	flag.IntVar(&o.etcdPort, "etcd-port", 0, "etcd client port on 127.0.0.1 (0 picks a free one)")
	flag.BoolVar(&o.keepData, "keep-data", false, "keep etcd data in <dir>/etcd so a restart finds the same objects")
	flag.Parse()
	if o.dir == "" {
		return o, fmt.Errorf("--dir is required")
	}
	for _, n := range strings.Split(nodes, ",") {
		if n = strings.TrimSpace(n); n != "" {
			o.nodes = append(o.nodes, n)
		}
	}
	return o, nil
}

// freePort asks the kernel for an unused loopback port. The port is released before the
// server binds it; on a test machine that race is acceptable.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "kube-control-plane: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := parseOptions()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return fmt.Errorf("create state directory %q: %w", o.dir, err)
	}
	if o.securePort == 0 {
		if o.securePort, err = freePort(); err != nil {
			return err
		}
	}
	if o.etcdPort == 0 {
		if o.etcdPort, err = freePort(); err != nil {
			return err
		}
	}

	pki, err := ensurePKI(o.dir)
	if err != nil {
		return err
	}
	tokens, err := ensureTokens(o.dir, o.nodes)
	if err != nil {
		return err
	}

	etcdDir := filepath.Join(o.dir, "etcd")
	if !o.keepData {
		if etcdDir, err = os.MkdirTemp("", "kube-control-plane-etcd-"); err != nil {
			return err
		}
	}
	etcd, err := startEtcd(etcdDir, o.etcdPort)
	if err != nil {
		return err
	}
	defer func() {
		etcd.Close()
		if !o.keepData {
			os.RemoveAll(etcdDir)
		}
	}()

	server := fmt.Sprintf("https://127.0.0.1:%d", o.securePort)
	if err := writeKubeconfigs(o.dir, server, pki.caPEM, tokens); err != nil {
		return err
	}

	// kube-apiserver installs its own SIGINT/SIGTERM handler and returns from Execute once it
	// has shut down; we only watch the same signals to know that the stop was requested.
	stopping := make(chan os.Signal, 1)
	signal.Notify(stopping, syscall.SIGINT, syscall.SIGTERM)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reportReady(ctx, server, tokens.admin, pki.caPEM, o)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs(o, pki, tokens))
	code := cli.Run(cmd)
	cancel()
	select {
	case <-stopping:
		return nil // asked to stop: a clean exit
	default:
	}
	if code != 0 {
		return fmt.Errorf("kube-apiserver exited with code %d (its log is on stderr)", code)
	}
	return nil
}

func apiserverArgs(o options, pki *pkiFiles, tokens *tokenSet) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", o.securePort),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", o.etcdPort),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--client-ca-file=" + pki.caCert,
		"--token-auth-file=" + tokens.file,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saPublic,
		"--service-account-signing-key-file=" + pki.saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--cert-dir=" + filepath.Join(o.dir, "pki"),
		"--v=0",
	}
}

// readyLine is the single line printed on stdout once /readyz is ok; the TypeScript helper
// parses it.
type readyLine struct {
	Ready           bool              `json:"ready"`
	Server          string            `json:"server"`
	AdminKubeconfig string            `json:"adminKubeconfig"`
	NodeKubeconfigs map[string]string `json:"nodeKubeconfigs"`
	SecurePort      int               `json:"securePort"`
	EtcdPort        int               `json:"etcdPort"`
}

func reportReady(ctx context.Context, server, adminToken string, caPEM []byte, o options) {
	client := newHTTPClient(caPEM)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
		if readyz(ctx, client, server, adminToken) {
			break
		}
	}
	line := readyLine{
		Ready:           true,
		Server:          server,
		AdminKubeconfig: filepath.Join(o.dir, "admin.kubeconfig"),
		NodeKubeconfigs: map[string]string{},
		SecurePort:      o.securePort,
		EtcdPort:        o.etcdPort,
	}
	for _, n := range o.nodes {
		line.NodeKubeconfigs[n] = filepath.Join(o.dir, n+".kubeconfig")
	}
	b, _ := json.Marshal(line)
	fmt.Println(string(b))
}
