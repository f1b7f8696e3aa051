// Command kube-control-plane runs a real etcd and a real kube-apiserver (Kubernetes v1.34) on
// loopback, secured the way a production cluster secures its kubelets: static tokens for an
// admin and one identity per node, Node,RBAC authorization and the NodeRestriction admission
// plugin. Once the API server is ready it also runs kube-scheduler and kube-controller-manager
// as child processes of this binary (components.go), unless --scheduler=false or
// --controller-manager=false. kubelet-pods' integration tests, benchmarks and demo start it through
// `kubelet-pods local-cluster`; nothing here is shipped in the npm package.
//
// It writes admin.kubeconfig and <node>.kubeconfig into --dir, prints one JSON line on stdout
// once /readyz answers ok, and on SIGINT/SIGTERM stops both servers and removes its temporary
// data (unless --keep-data, used by tests that restart the control plane in place).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
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
	// exitWithStdin stops the program when stdin reaches end of file: a parent that spawns it
	// with a pipe on stdin thereby takes it down even when the parent is killed outright.
	exitWithStdin bool
	// compactionInterval is how often the API server compacts etcd history; after that, a
	// watch from an older resourceVersion gets 410 Gone. Tests shorten it to reach that path.
	compactionInterval time.Duration
	// stopGrace bounds a graceful stop: kube-apiserver waits for open watches before it
	// exits, which with a connected client takes up to a minute.
	stopGrace time.Duration
	// extraAddresses are addresses besides 127.0.0.1 where the API server is also reachable
	// (forwarded to its loopback port) and which its serving certificate names: the host end
	// of a veth pair, for a node agent in a network namespace that the API server must proxy
	// to (it refuses to proxy to loopback node addresses).
	extraAddresses []net.IP
	// auditPolicyFile and auditLogPath turn on the API server's audit log (both or neither):
	// tests that must know who wrote what, and when, read it (JSON lines, one per request).
	auditPolicyFile string
	auditLogPath    string
	// scheduler and controllerManager: run kube-scheduler and kube-controller-manager.
	scheduler         bool
	controllerManager bool
}

func parseOptions() (options, error) {
	var o options
	var nodes string
	flag.StringVar(&o.dir, "dir", "", "state directory for kubeconfigs, certificates and tokens (required)")
	flag.StringVar(&nodes, "nodes", "node-1", "comma-separated node names that get their own credentials")
	flag.IntVar(&o.securePort, "secure-port", 0, "kube-apiserver port on 127.0.0.1 (0 picks a free one)")
	flag.IntVar(&o.etcdPort, "etcd-port", 0, "etcd client port on 127.0.0.1 (0 picks a free one)")
	flag.BoolVar(&o.keepData, "keep-data", false, "keep etcd data in <dir>/etcd so a restart finds the same objects")
	flag.DurationVar(&o.compactionInterval, "etcd-compaction-interval", 5*time.Minute, "how often kube-apiserver compacts etcd (its --etcd-compaction-interval)")
	flag.DurationVar(&o.stopGrace, "stop-grace", time.Second, "after SIGINT/SIGTERM, exit at the latest this long later even if open watches keep kube-apiserver busy")
	flag.BoolVar(&o.exitWithStdin, "exit-with-stdin", false, "stop as on SIGTERM when stdin closes (for a parent process that holds a pipe to it)")
	var extra string
	flag.StringVar(&extra, "extra-address", "", "comma-separated IP addresses where the API server is also reachable on its port (forwarded to 127.0.0.1; named in its serving certificate)")
	flag.StringVar(&o.auditPolicyFile, "audit-policy-file", "", "kube-apiserver's audit policy (its --audit-policy-file); needs --audit-log-path")
	flag.StringVar(&o.auditLogPath, "audit-log-path", "", "where kube-apiserver writes its audit log as JSON lines (its --audit-log-path); needs --audit-policy-file")
	flag.BoolVar(&o.scheduler, "scheduler", true, "run kube-scheduler (a child process) once the API server is ready")
	flag.BoolVar(&o.controllerManager, "controller-manager", true, "run kube-controller-manager (a child process) once the API server is ready")
	flag.Parse()
	if (o.auditPolicyFile == "") != (o.auditLogPath == "") {
		return o, fmt.Errorf("--audit-policy-file and --audit-log-path go together")
	}
	for _, a := range strings.Split(extra, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		ip := net.ParseIP(a)
		if ip == nil {
			return o, fmt.Errorf("--extra-address: %q is not an IP address", a)
		}
		o.extraAddresses = append(o.extraAddresses, ip)
	}
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
// server binds it, so it can be taken meanwhile: etcd's is picked again when that happens.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// addressInUse tells a failed bind from other start failures; etcd does not wrap the syscall
// error, so its text is what is left to go by.
func addressInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

func main() {
	// A child started by componentSet: the same binary, another program.
	if len(os.Args) >= 3 && os.Args[1] == componentCommand {
		os.Exit(runComponent(os.Args[2], os.Args[3:]))
	}
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

	pki, err := ensurePKI(o.dir, o.extraAddresses)
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
	etcdPortPicked := o.etcdPort == 0
	if etcdPortPicked {
		if o.etcdPort, err = freePort(); err != nil {
			return err
		}
	}
	etcd, err := startEtcd(etcdDir, o.etcdPort)
	// A port freePort picked can be taken before etcd binds it (by another process's outgoing
	// connection, or another control plane starting at the same time): pick again when it was ours to pick.
	for attempt := 1; err != nil && etcdPortPicked && addressInUse(err) && attempt < 5; attempt++ {
		if o.etcdPort, err = freePort(); err != nil {
			return err
		}
		etcd, err = startEtcd(etcdDir, o.etcdPort)
	}
	if err != nil {
		return err
	}
	defer func() {
		etcd.Close()
		if !o.keepData {
			os.RemoveAll(etcdDir)
		}
	}()

	for _, ip := range o.extraAddresses {
		if err := forwardToLoopback(ip, o.securePort); err != nil {
			return err
		}
	}

	server := fmt.Sprintf("https://127.0.0.1:%d", o.securePort)
	if err := writeKubeconfigs(o.dir, server, pki.caPEM, tokens); err != nil {
		return err
	}

	// kube-apiserver installs its own SIGINT/SIGTERM handler and returns from Execute once it
	// has shut down; we only watch the same signals to know that the stop was requested.
	stopping := make(chan os.Signal, 1)
	signal.Notify(stopping, syscall.SIGINT, syscall.SIGTERM)
	if o.exitWithStdin {
		go stopWhenStdinCloses()
	}
	components := &componentSet{}
	// The components are stopped first (they would only log that the API server is gone),
	// and bounded like the rest of the stop.
	go func() {
		<-stopping
		components.stop(o.stopGrace)
	}()
	go exitAfterStopGrace(o.stopGrace, func() {
		components.stop(o.stopGrace)
		etcd.Close()
	})

	var specs []componentSpec
	if o.scheduler {
		specs = append(specs, schedulerSpec(o.dir))
	}
	if o.controllerManager {
		specs = append(specs, controllerManagerSpec(o.dir, pki))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reportReady(ctx, server, tokens.admin, pki.caPEM, o, components, specs)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs(o, pki, tokens))
	code := cli.Run(cmd)
	cancel()
	components.stop(o.stopGrace)
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
	args := []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", o.securePort),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", o.etcdPort),
		"--etcd-compaction-interval=" + o.compactionInterval.String(),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--client-ca-file=" + pki.caCert,
		// How the API server reaches kubelets (node proxy, pods/log, exec): as
		// kube-apiserver-kubelet-client (system:masters), at the Node's InternalIP first.
		"--kubelet-client-certificate=" + pki.kubeletClientCert,
		"--kubelet-client-key=" + pki.kubeletClientKey,
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		// The aggregation layer (metrics.k8s.io from metrics-server): the aggregator proxies as
		// front-proxy-client, naming the user in these headers; it dials an APIService's
		// endpoints directly, as there is no kube-proxy for Service IPs.
		"--requestheader-client-ca-file=" + pki.caCert,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + pki.frontProxyClientCert,
		"--proxy-client-key-file=" + pki.frontProxyClientKey,
		"--enable-aggregator-routing=true",
		"--token-auth-file=" + tokens.file,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saPublic,
		"--service-account-signing-key-file=" + pki.saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		// The advertised address is loopback, which the endpoints of the "kubernetes" Service
		// may not hold; without this the reconciler logs an error every 10 s.
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(o.dir, "pki"),
		"--v=0",
	}
	if o.auditPolicyFile != "" {
		// Blocking mode: a request is answered only once its event is written, so the log is
		// complete and in order when a test reads it.
		args = append(args,
			"--audit-policy-file="+o.auditPolicyFile,
			"--audit-log-path="+o.auditLogPath,
			"--audit-log-format=json",
			"--audit-log-mode=blocking",
		)
	}
	return args
}

// forwardToLoopback accepts connections on ip:port and relays each to 127.0.0.1:port, where
// kube-apiserver listens, for as long as the program runs.
func forwardToLoopback(ip net.IP, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(port)))
	if err != nil {
		return fmt.Errorf("--extra-address %s: %w", ip, err)
	}
	target := fmt.Sprintf("127.0.0.1:%d", port)
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
				go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return nil
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
	// Components: the ones running besides etcd and kube-apiserver (kube-scheduler,
	// kube-controller-manager), each already answering its health endpoint.
	Components []string `json:"components"`
}

// reportReady waits for the API server's /readyz, then starts the components (they need the
// API server) and waits until each answers its health endpoint, then prints the ready line.
func reportReady(ctx context.Context, server, adminToken string, caPEM []byte, o options, components *componentSet, specs []componentSpec) {
	client := newHTTPClient(caPEM)
	if !poll(ctx, func() bool { return readyz(ctx, client, server, adminToken) }) {
		return
	}
	names := []string{}
	componentClient := componentHealthClient()
	for _, c := range components.start(specs) {
		if !poll(ctx, func() bool { return c.healthy(ctx, componentClient) }) {
			return
		}
		names = append(names, c.spec.name)
	}
	line := readyLine{
		Ready:           true,
		Server:          server,
		AdminKubeconfig: filepath.Join(o.dir, "admin.kubeconfig"),
		NodeKubeconfigs: map[string]string{},
		SecurePort:      o.securePort,
		EtcdPort:        o.etcdPort,
		Components:      names,
	}
	for _, n := range o.nodes {
		line.NodeKubeconfigs[n] = filepath.Join(o.dir, n+".kubeconfig")
	}
	b, _ := json.Marshal(line)
	fmt.Println(string(b))
}

// poll calls ok every 200 ms until it is true (then true) or ctx ends (then false).
func poll(ctx context.Context, ok func() bool) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
		if ok() {
			return true
		}
	}
}

// stopWhenStdinCloses waits for end of file on stdin, then asks this process to stop the way
// SIGTERM does. If the API server has not installed its signal handler yet (still starting),
// the signal alone would not end it, so the process exits after a grace period regardless.
func stopWhenStdinCloses() {
	_, _ = io.Copy(io.Discard, os.Stdin)
	fmt.Fprintln(os.Stderr, "kube-control-plane: stdin closed, stopping")
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	time.Sleep(30 * time.Second)
	os.Exit(1)
}

// exitAfterStopGrace exits the process `grace` after the first SIGINT/SIGTERM, closing etcd
// first (bounded). Clients with open watches then see their connection drop, as when a real
// control plane goes away.
func exitAfterStopGrace(grace time.Duration, closeEtcd func()) {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	<-signals
	time.Sleep(grace)
	fmt.Fprintf(os.Stderr, "kube-control-plane: still stopping after %s, exiting\n", grace)
	closed := make(chan struct{})
	go func() {
		closeEtcd()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(time.Second):
	}
	os.Exit(0)
}
