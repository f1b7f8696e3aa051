package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // the components' --logging-format=json, as in their own main
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as in their own main
	_ "k8s.io/component-base/metrics/prometheus/version"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// The scheduler and the controller manager run as child processes of this same binary
// (`kube-control-plane component <name> <args>`): each has process-wide state of its own
// (feature gates, the legacy metrics registry, klog flags) that must not meet kube-apiserver's.

const componentCommand = "component"

const (
	kubeScheduler         = "kube-scheduler"
	kubeControllerManager = "kube-controller-manager"
)

// runComponent is main for a child: it runs the named component until SIGTERM, or until its
// stdin (a pipe from the parent) closes, which is how a child notices that its parent died.
func runComponent(name string, args []string) int {
	var cmd *cobra.Command
	switch name {
	case kubeScheduler:
		cmd = scheduler.NewSchedulerCommand()
	case kubeControllerManager:
		cmd = controllermanager.NewControllerManagerCommand()
	default:
		fmt.Fprintf(os.Stderr, "kube-control-plane: unknown component %q\n", name)
		return 2
	}
	cmd.SetArgs(args)
	go stopWhenStdinCloses()
	return cli.Run(cmd)
}

// componentSpec says how to start one component: its arguments for a given secure port, and
// which of its health endpoints tells that it works.
type componentSpec struct {
	name string
	args func(securePort int) []string
	// healthPath: the scheduler's /readyz waits for its informers to sync; the controller
	// manager has no readyz, and its /healthz is ok once it serves (controllers start next).
	healthPath string
}

// commonArgs are the flags both components take: their kubeconfig for the API server and for
// checking bearer tokens on their own HTTPS endpoint (TokenReview, SubjectAccessReview, so the
// admin token reads /metrics; /healthz, /readyz and /livez are open to anyone), no lookup of
// the front-proxy CA (the API server has none, and the lookup would log an error every minute),
// no leader election, and loopback on the port given.
func commonArgs(kubeconfig string, port int) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authentication-skip-lookup=true",
		"--authorization-kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--v=0",
	}
}

func schedulerSpec(dir string) componentSpec {
	kubeconfig := filepath.Join(dir, "scheduler.kubeconfig")
	return componentSpec{
		name:       kubeScheduler,
		healthPath: "/readyz",
		args:       func(port int) []string { return commonArgs(kubeconfig, port) },
	}
}

func controllerManagerSpec(dir string, pki *pkiFiles) componentSpec {
	kubeconfig := filepath.Join(dir, "controller-manager.kubeconfig")
	return componentSpec{
		name:       kubeControllerManager,
		healthPath: "/healthz",
		args: func(port int) []string {
			return append(commonArgs(kubeconfig, port),
				// Each controller acts as its own ServiceAccount in kube-system, as on a
				// kubeadm cluster, so RBAC denials show which controller lacked what.
				"--use-service-account-credentials=true",
				"--service-account-private-key-file="+pki.saPrivate,
				"--root-ca-file="+pki.caCert,
				"--cluster-signing-cert-file="+pki.caCert,
				"--cluster-signing-key-file="+pki.caKey,
			)
		},
	}
}

// component supervises one child process: it starts it, restarts it when it exits on its own
// (a port taken between freePort and its bind, a crash), relays its log, and stops it.
type component struct {
	spec componentSpec

	mu       sync.Mutex
	cmd      *exec.Cmd
	port     int
	stopping bool
	// done is closed when the supervising goroutine has returned (after stop).
	done chan struct{}
}

func startComponent(spec componentSpec) *component {
	c := &component{spec: spec, done: make(chan struct{})}
	go c.supervise()
	return c
}

func (c *component) supervise() {
	defer close(c.done)
	backoff := time.Second
	for {
		started := time.Now()
		err := c.runOnce()
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping {
			return
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		fmt.Fprintf(os.Stderr, "kube-control-plane: %s exited (%v), starting it again in %s\n", c.spec.name, err, backoff)
		time.Sleep(backoff)
		if backoff < 16*time.Second {
			backoff *= 2
		}
	}
}

// runOnce starts the child on a fresh free port and waits for it to exit.
func (c *component) runOnce() error {
	port, err := freePort()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, append([]string{componentCommand, c.spec.name}, c.spec.args(port)...)...)
	log := &prefixWriter{prefix: []byte("[" + c.spec.name + "] "), out: os.Stderr}
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.Env = withoutInClusterEnv(os.Environ())
	// Never written to: the child stops when it reads end of file, i.e. when this process
	// exits, however it exits (a SIGKILLed parent included).
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		return nil
	}
	if err := cmd.Start(); err != nil {
		c.mu.Unlock()
		return err
	}
	c.cmd, c.port = cmd, port
	c.mu.Unlock()
	err = cmd.Wait()
	stdin.Close()
	c.mu.Lock()
	c.cmd, c.port = nil, 0
	c.mu.Unlock()
	return err
}

// healthy reports whether the running child answers its health endpoint with 200.
func (c *component) healthy(ctx context.Context, client *http.Client) bool {
	c.mu.Lock()
	port := c.port
	c.mu.Unlock()
	if port == 0 {
		return false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, c.spec.healthPath), nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop sends SIGTERM, then SIGKILL once `grace` has passed, and returns when the child has
// exited (or at the latest `grace` + 1 s later). Safe to call more than once.
func (c *component) stop(grace time.Duration) {
	c.mu.Lock()
	c.stopping = true
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	c.mu.Unlock()
	select {
	case <-c.done:
		return
	case <-time.After(grace):
	}
	c.mu.Lock()
	if c.cmd != nil && c.cmd.Process != nil {
		_ = c.cmd.Process.Kill()
	}
	c.mu.Unlock()
	select {
	case <-c.done:
	case <-time.After(time.Second):
	}
}

// componentHealthClient probes the components' own HTTPS endpoints. They serve with a
// self-signed certificate made in memory at start, so there is nothing to verify against;
// the probe only asks a loopback port we chose whether it answers.
func componentHealthClient() *http.Client {
	return &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}},
	}
}

// prefixWriter writes each complete line with a prefix, so the components' logs sit beside
// kube-apiserver's on stderr and say whose they are. Writes from several children may
// interleave only at line boundaries.
type prefixWriter struct {
	prefix []byte
	out    io.Writer
	mu     sync.Mutex
	buf    []byte
}

var stderrLines sync.Mutex

func (w *prefixWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := make([]byte, 0, len(w.prefix)+i+1)
		line = append(append(line, w.prefix...), w.buf[:i+1]...)
		stderrLines.Lock()
		_, _ = w.out.Write(line)
		stderrLines.Unlock()
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// componentSet is the children of one run: started once the API server is ready, stopped
// with it. Once stopped, it starts nothing more.
type componentSet struct {
	mu      sync.Mutex
	running []*component
	stopped bool
}

func (s *componentSet) start(specs []componentSpec) []*component {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	for _, spec := range specs {
		s.running = append(s.running, startComponent(spec))
	}
	return s.running
}

// stop stops every child in parallel and returns once all have exited (see component.stop).
func (s *componentSet) stop(grace time.Duration) {
	s.mu.Lock()
	s.stopped = true
	running := s.running
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range running {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stop(grace)
		}()
	}
	wg.Wait()
}

// withoutInClusterEnv drops KUBERNETES_SERVICE_HOST/PORT: run inside a pod (CI), a component
// would otherwise take the outer cluster's in-cluster config for what no flag names.
func withoutInClusterEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "KUBERNETES_SERVICE_HOST=") && !strings.HasPrefix(kv, "KUBERNETES_SERVICE_PORT=") {
			out = append(out, kv)
		}
	}
	return out
}
