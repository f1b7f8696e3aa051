// Many nodes' Leases kept by the kubelet's own code: the controller of
// k8s.io/component-helpers/apimachinery/lease that kubelet.go starts for its node, run once per
// node name in one process, each through a client set up as the kubelet's heartbeat client
// (cmd/kubelet/app/server.go: no client-side rate limit, a 10 s deadline, protobuf). It is the
// peer that `kubelet-pods fleet`'s renewals are measured beside at scale
// (bench/agent/kubelet-leases.bench.ts): what the same control plane answers when the
// kubelet's code asks for the same renewals. Leases only: no Node, so no owner reference.
// Measurement infrastructure only: not in the npm package.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/utils/clock"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig the Leases are written with")
	count := flag.Int("leases", 100, "how many node Leases to keep")
	prefix := flag.String("prefix", "kl-", "node names are this prefix and a number from 0")
	connections := flag.Int("connections", 16, "client sets (each its own connection) the Leases are spread over")
	spread := flag.Duration("spread", 10*time.Second, "the controllers start evenly over this long, as nodes that did not all start at once")
	flag.Parse()
	if *count < 1 || *connections < 1 {
		fmt.Fprintln(os.Stderr, "kubelet-leases: -leases and -connections must be at least 1")
		os.Exit(2)
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-leases: %v\n", err)
		os.Exit(1)
	}
	config.QPS = -1
	config.Timeout = 10 * time.Second
	config.ContentType = "application/vnd.kubernetes.protobuf"
	config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	config.UserAgent = "kubelet-leases"

	clients := make([]kubernetes.Interface, *connections)
	for i := range clients {
		c := rest.CopyConfig(config)
		// client-go shares one transport among equal configs; a dialer of its own gives each
		// client set its own connection, as separate kubelets have.
		c.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		if clients[i], err = kubernetes.NewForConfig(c); err != nil {
			fmt.Fprintf(os.Stderr, "kubelet-leases: %v\n", err)
			os.Exit(1)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	step := *spread / time.Duration(*count)
	for i := 0; i < *count && ctx.Err() == nil; i++ {
		name := fmt.Sprintf("%s%d", *prefix, i)
		// The kubelet's arguments: 40 s duration, renewed every quarter of it, in kube-node-lease.
		controller := lease.NewController(clock.RealClock{}, clients[i%len(clients)], name, 40, nil, 10*time.Second, name, "kube-node-lease", nil)
		go controller.Run(ctx)
		if step > 0 {
			time.Sleep(step)
		}
	}
	fmt.Println("started")
	<-ctx.Done()
}
