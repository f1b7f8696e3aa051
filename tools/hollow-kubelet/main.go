// Command hollow-kubelet runs one real kubelet of Kubernetes v1.34 with kubemark's fake
// container runtime: the kubelet's own pod manager, static pod sources, mirror pods, status
// manager, node status and lease code, with containers that "run" without a runtime.
// kubelet-pods runs it next to its own agent on one local control plane (src/cluster/
// hollow-kubelet.ts) so that differential tests can compare what each one writes to the API
// server; nothing here is shipped in the npm package.
//
// Everything it serves listens on 127.0.0.1 (the kubelet port without TLS or authentication,
// the read-only port and a healthz port). It prints one JSON line on stdout once its Node is
// registered and its read-only /healthz answers ok, and exits 0 on SIGINT/SIGTERM (or when
// stdin closes, with --exit-with-stdin).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	cadvisorapi "github.com/google/cadvisor/info/v1"
	"go.opentelemetry.io/otel/trace/noop"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	clientset "k8s.io/client-go/kubernetes"
	v1core "k8s.io/client-go/kubernetes/typed/core/v1"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	remote "k8s.io/cri-client/pkg"
	fakeremote "k8s.io/cri-client/pkg/fake"
	"k8s.io/klog/v2"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	cadvisortest "k8s.io/kubernetes/pkg/kubelet/cadvisor/testing"
	"k8s.io/kubernetes/pkg/kubelet/cm"
	"k8s.io/kubernetes/pkg/kubemark"

	_ "k8s.io/component-base/metrics/prometheus/restclient" // client metrics on /metrics, as in the kubelet
	_ "k8s.io/component-base/metrics/prometheus/version"
)

type config struct {
	nodeName   string
	kubeconfig string
	rootDir    string
	// staticPodPath and manifestURL are the kubelet's staticPodPath and staticPodURL; empty
	// turns that source off.
	staticPodPath string
	manifestURL   string
	nodeIP        string

	port         int
	readOnlyPort int
	healthzPort  int

	// The defaults of these are the kubelet's own (not kubemark's), so that an unconfigured
	// hollow kubelet behaves like a kubelet installed with default configuration.
	fileCheckFrequency        time.Duration
	httpCheckFrequency        time.Duration
	syncFrequency             time.Duration
	nodeStatusUpdateFrequency time.Duration
	nodeStatusReportFrequency time.Duration
	nodeLeaseDurationSeconds  int
	maxPods                   int
	machineCPUs               int
	machineMemoryBytes        uint64
	kubeAPIQPS                int
	kubeAPIBurst              int

	// recordEvents sends the kubelet's Events to the API server as a kubelet does; kubemark
	// drops them.
	recordEvents  bool
	exitWithStdin bool
}

func parseFlags() (config, error) {
	var c config
	flag.StringVar(&c.nodeName, "node-name", "", "the Node's name (the kubelet's --hostname-override); required")
	flag.StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig of the node identity system:node:<name>; required")
	flag.StringVar(&c.rootDir, "root-dir", "", "the kubelet's root directory (pods, checkpoints, sockets, logs, temporary files); required")
	flag.StringVar(&c.staticPodPath, "static-pod-path", "", "directory (or file) of static pod manifests; empty: no file source")
	flag.StringVar(&c.manifestURL, "manifest-url", "", "URL of static pod manifests; empty: no http source")
	flag.StringVar(&c.nodeIP, "node-ip", "", "the kubelet's --node-ip (must be a non-loopback address of this host); empty: the kubelet picks one")
	flag.IntVar(&c.port, "port", 0, "kubelet API port on 127.0.0.1, plain HTTP without authentication (0 picks a free one)")
	flag.IntVar(&c.readOnlyPort, "read-only-port", 0, "read-only port on 127.0.0.1 (0 picks a free one)")
	flag.IntVar(&c.healthzPort, "healthz-port", 0, "healthz port on 127.0.0.1 (0 picks a free one)")
	flag.DurationVar(&c.fileCheckFrequency, "file-check-frequency", 20*time.Second, "the kubelet's fileCheckFrequency")
	flag.DurationVar(&c.httpCheckFrequency, "http-check-frequency", 20*time.Second, "the kubelet's httpCheckFrequency")
	flag.DurationVar(&c.syncFrequency, "sync-frequency", time.Minute, "the kubelet's syncFrequency")
	flag.DurationVar(&c.nodeStatusUpdateFrequency, "node-status-update-frequency", 10*time.Second, "the kubelet's nodeStatusUpdateFrequency")
	flag.DurationVar(&c.nodeStatusReportFrequency, "node-status-report-frequency", 5*time.Minute, "the kubelet's nodeStatusReportFrequency")
	flag.IntVar(&c.nodeLeaseDurationSeconds, "node-lease-duration-seconds", 40, "the kubelet's nodeLeaseDurationSeconds (the Lease is renewed every quarter of it)")
	flag.IntVar(&c.maxPods, "max-pods", 110, "the kubelet's maxPods")
	flag.IntVar(&c.machineCPUs, "machine-cpus", 1, "cores of the simulated machine, the Node's cpu capacity (kubemark's fake: 1)")
	flag.Uint64Var(&c.machineMemoryBytes, "machine-memory-bytes", 4026531840, "memory of the simulated machine in bytes (kubemark's fake: 3840Mi)")
	flag.IntVar(&c.kubeAPIQPS, "kube-api-qps", 50, "the kubelet's kubeAPIQPS")
	flag.IntVar(&c.kubeAPIBurst, "kube-api-burst", 100, "the kubelet's kubeAPIBurst")
	flag.BoolVar(&c.recordEvents, "record-events", true, "send the kubelet's Events to the API server")
	flag.BoolVar(&c.exitWithStdin, "exit-with-stdin", false, "stop as on SIGTERM when stdin closes (for a parent process that holds a pipe to it)")
	klog.InitFlags(flag.CommandLine)
	flag.Parse()
	switch {
	case c.nodeName == "":
		return c, fmt.Errorf("--node-name is required")
	case c.kubeconfig == "":
		return c, fmt.Errorf("--kubeconfig is required")
	case c.rootDir == "":
		return c, fmt.Errorf("--root-dir is required")
	}
	var err error
	if c.rootDir, err = filepath.Abs(c.rootDir); err != nil {
		return c, err
	}
	for _, p := range []*int{&c.port, &c.readOnlyPort, &c.healthzPort} {
		if *p == 0 {
			if *p, err = freePort(); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// freePort asks the kernel for an unused loopback port. The port is released before the
// kubelet binds it; on a test machine that race is acceptable.
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
		fmt.Fprintf(os.Stderr, "hollow-kubelet: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	// kubemark's configuration helper creates its directories in the temporary directory, and
	// parts of the kubelet create temporary files: keep all of it inside the root directory.
	tmp := filepath.Join(c.rootDir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("create root directory %q: %w", c.rootDir, err)
	}
	if err := os.Setenv("TMPDIR", tmp); err != nil {
		return err
	}

	stopping := make(chan os.Signal, 1)
	signal.Notify(stopping, syscall.SIGINT, syscall.SIGTERM)
	if c.exitWithStdin {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			fmt.Fprintln(os.Stderr, "hollow-kubelet: stdin closed, stopping")
			stopping <- syscall.SIGTERM
		}()
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	clientConfig, err := loadClientConfig(c)
	if err != nil {
		return err
	}
	client, err := clientset.NewForConfig(clientConfig)
	if err != nil {
		return fmt.Errorf("create API client: %w", err)
	}
	// As in the kubelet: heartbeats (Lease, node status) bypass the rate limiter and time out
	// after the shorter of the status update period and the lease duration.
	heartbeatConfig := *clientConfig
	heartbeatConfig.QPS = -1
	heartbeatConfig.Timeout = c.nodeStatusUpdateFrequency
	if lease := time.Duration(c.nodeLeaseDurationSeconds) * time.Second; lease < heartbeatConfig.Timeout {
		heartbeatConfig.Timeout = lease
	}
	heartbeatClient, err := clientset.NewForConfig(&heartbeatConfig)
	if err != nil {
		return fmt.Errorf("create heartbeat client: %w", err)
	}

	// The fake CRI runtime serves gRPC on a unix socket; the kubelet talks to it through the
	// real CRI client, so the kubelet's runtime manager, PLEG and status code all run.
	runtime := fakeremote.NewFakeRemoteRuntime()
	endpoint := "unix://" + filepath.Join(c.rootDir, "fake-cri.sock")
	_ = os.Remove(filepath.Join(c.rootDir, "fake-cri.sock"))
	if err := runtime.Start(endpoint); err != nil {
		return fmt.Errorf("start the fake container runtime: %w", err)
	}
	defer runtime.Stop()
	logger := klog.Background()
	runtimeService, err := remote.NewRemoteRuntimeService(endpoint, 15*time.Second, noop.NewTracerProvider(), &logger)
	if err != nil {
		return fmt.Errorf("connect to the fake container runtime: %w", err)
	}

	flags, kc := kubemark.GetHollowKubeletConfig(&kubemark.HollowKubeletOptions{
		NodeName:            c.nodeName,
		KubeletPort:         c.port,
		KubeletReadOnlyPort: c.readOnlyPort,
		MaxPods:             c.maxPods,
		NodeLabels:          map[string]string{},
	})
	// Replace kubemark's temporary directories and its test-cluster settings with ours.
	kubemarkDir := flags.RootDirectory
	flags.RootDirectory = c.rootDir
	flags.NodeIP = c.nodeIP
	kc.Address = "127.0.0.1"
	kc.HealthzBindAddress = "127.0.0.1"
	kc.HealthzPort = int32(c.healthzPort)
	kc.StaticPodPath = c.staticPodPath
	kc.StaticPodURL = c.manifestURL
	kc.FileCheckFrequency.Duration = c.fileCheckFrequency
	kc.HTTPCheckFrequency.Duration = c.httpCheckFrequency
	kc.SyncFrequency.Duration = c.syncFrequency
	kc.NodeStatusUpdateFrequency.Duration = c.nodeStatusUpdateFrequency
	kc.NodeStatusReportFrequency.Duration = c.nodeStatusReportFrequency
	kc.NodeLeaseDurationSeconds = int32(c.nodeLeaseDurationSeconds)
	kc.KubeAPIQPS = int32(c.kubeAPIQPS)
	kc.KubeAPIBurst = int32(c.kubeAPIBurst)
	kc.PodLogsDir = filepath.Join(c.rootDir, "pod-logs")
	kc.ProviderID = "" // kubemark marks its nodes kubemark://<name>; a plain kubelet sets none
	if err := os.MkdirAll(kc.PodLogsDir, 0o755); err != nil {
		return err
	}
	if kubemarkDir != c.rootDir {
		_ = os.RemoveAll(kubemarkDir)
	}

	hollow := kubemark.NewHollowKubelet(
		flags, kc,
		client, heartbeatClient,
		&sizedMachine{Fake: cadvisortest.Fake{NodeName: c.nodeName}, cpus: c.machineCPUs, memoryBytes: c.machineMemoryBytes},
		runtime.ImageService,
		runtimeService,
		cm.NewStubContainerManager(),
	)
	if c.recordEvents {
		// Without a recorder in the dependencies the kubelet builds its own, which sends to
		// EventClient (with the kubelet's event rate limits).
		eventConfig := *clientConfig
		eventConfig.QPS = float32(kc.EventRecordQPS)
		eventConfig.Burst = int(kc.EventBurst)
		if hollow.KubeletDeps.EventClient, err = v1core.NewForConfig(&eventConfig); err != nil {
			return fmt.Errorf("create event client: %w", err)
		}
		hollow.KubeletDeps.Recorder = nil
	}

	// The kubelet binds its own ports; the healthz port is served by the kubelet command, not
	// by RunKubelet, so it is served here the same way (a plain ping).
	mux := http.NewServeMux()
	healthz.InstallHandler(mux)
	healthzServer := &http.Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(c.healthzPort)), Handler: mux}
	healthzListener, err := net.Listen("tcp", healthzServer.Addr)
	if err != nil {
		return fmt.Errorf("listen on the healthz port: %w", err)
	}
	go func() { _ = healthzServer.Serve(healthzListener) }()
	defer healthzServer.Close()

	server := &options.KubeletServer{KubeletFlags: *hollow.KubeletFlags, KubeletConfiguration: *hollow.KubeletConfiguration}
	if err := kubeletapp.RunKubelet(ctx, server, hollow.KubeletDeps); err != nil {
		return fmt.Errorf("start the kubelet: %w", err)
	}
	go reportReady(ctx, c, client)

	sig := <-stopping
	// The kubelet has no orderly shutdown of its own (the kubelet command returns from main):
	// stop the runtime socket and exit, leaving the API objects as a stopped kubelet would.
	fmt.Fprintf(os.Stderr, "hollow-kubelet: %s, stopping\n", sig)
	cancel()
	return nil
}

func loadClientConfig(c config) (*restclient.Config, error) {
	raw, err := clientcmd.LoadFromFile(c.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig %q: %w", c.kubeconfig, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %q: %w", c.kubeconfig, err)
	}
	// The kubelet's defaults: protobuf with JSON accepted, its own rate limits.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS = float32(c.kubeAPIQPS)
	cfg.Burst = c.kubeAPIBurst
	// client-go names its User-Agent after the program, here hollow-kubelet; the API server
	// takes the field manager of every write from it, so send what a kubelet binary sends.
	cfg.UserAgent = restclient.DefaultKubernetesUserAgent()
	if i := strings.Index(cfg.UserAgent, "/"); i >= 0 {
		cfg.UserAgent = "kubelet" + cfg.UserAgent[i:]
	}
	return cfg, nil
}

// readyLine is the single line printed on stdout once the kubelet is up; the TypeScript helper
// parses it.
type readyLine struct {
	Ready        bool   `json:"ready"`
	NodeName     string `json:"nodeName"`
	NodeUID      string `json:"nodeUID"`
	RootDir      string `json:"rootDir"`
	Port         int    `json:"port"`
	ReadOnlyPort int    `json:"readOnlyPort"`
	HealthzPort  int    `json:"healthzPort"`
}

// reportReady waits until the kubelet's read-only server answers /healthz (its sync loop
// runs) and the kubelet has registered its Node, then prints the ready line.
func reportReady(ctx context.Context, c config, client clientset.Interface) {
	httpClient := &http.Client{Timeout: 2 * time.Second}
	healthzURL := fmt.Sprintf("http://127.0.0.1:%d/healthz", c.readOnlyPort)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := httpClient.Get(healthzURL)
		if err != nil {
			continue
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			continue
		}
		node, err := client.CoreV1().Nodes().Get(ctx, c.nodeName, metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) {
				klog.V(2).InfoS("Waiting for the Node", "err", err)
			}
			continue
		}
		b, _ := json.Marshal(readyLine{
			Ready:        true,
			NodeName:     c.nodeName,
			NodeUID:      string(node.UID),
			RootDir:      c.rootDir,
			Port:         c.port,
			ReadOnlyPort: c.readOnlyPort,
			HealthzPort:  c.healthzPort,
		})
		fmt.Println(string(b))
		return
	}
}

// sizedMachine is kubemark's fake cAdvisor with a machine size of our choosing: its own is
// fixed at one core, and a manifest set whose CPU requests exceed one core would have the
// kubelet reject pods at admission, which is not what a test of mirror status looks at.
type sizedMachine struct {
	cadvisortest.Fake
	cpus        int
	memoryBytes uint64
}

func (m *sizedMachine) MachineInfo() (*cadvisorapi.MachineInfo, error) {
	info, err := m.Fake.MachineInfo()
	if err != nil {
		return nil, err
	}
	info.NumCores = m.cpus
	info.MemoryCapacity = m.memoryBytes
	return info, nil
}
