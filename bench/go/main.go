// Command podmanagerbench times the kubelet's basicManager (k8s.io/kubernetes/pkg/kubelet/pod,
// v1.34) on the workloads of bench/pod-manager.bench.ts and prints one JSON line per
// (method, size): {"method":…,"size":…,"nsPerOp":…,"iterations":…}.
//
// The workload must stay in step with bench/workload.ts: N non-mirror pods, every tenth one a
// static pod (source "file") with a mirror pod; the others API pods spread over ten namespaces.
// Per-op methods walk a fixed list of targets round-robin so lookups hit different keys, with a
// wrapping index as the TS side does: `i%len` costs an integer division per call, which at
// 20-40 ns per lookup was a visible share of what the Go column charged to the kubelet.
//
// `podmanagerbench oracle` does not time anything: it replays call sequences read from stdin
// and prints every answer (see oracle.go), for test/integration/pod-manager-oracle.test.ts.
// `podmanagerbench decode` decodes manifests as the kubelet's sources do (see decode.go), for
// test/integration/pod-defaults-oracle.test.ts.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podmanager "k8s.io/kubernetes/pkg/kubelet/pod"
)

const (
	sourceKey = "kubernetes.io/config.source"
	mirrorKey = "kubernetes.io/config.mirror"
	hashKey   = "kubernetes.io/config.hash"
)

type workload struct {
	all       []*v1.Pod // load order: each static pod is followed by its mirror
	nonMirror []*v1.Pod
	statics   []*v1.Pod
	mirrors   []*v1.Pod
	fullNames []string // of nonMirror, same order
	uids      []types.UID
}

func newPod(uid, name, namespace string, annotations map[string]string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		UID: types.UID(uid), Name: name, Namespace: namespace, Annotations: annotations,
	}}
}

func buildWorkload(size int) *workload {
	w := &workload{}
	for i := 0; i < size; i++ {
		if i%10 == 0 {
			uid := "static-uid-" + strconv.Itoa(i)
			name := "static-" + strconv.Itoa(i)
			static := newPod(uid, name, "kube-system", map[string]string{sourceKey: "file", hashKey: uid})
			mirror := newPod("mirror-uid-"+strconv.Itoa(i), name, "kube-system",
				map[string]string{sourceKey: "api", mirrorKey: uid})
			w.all = append(w.all, static, mirror)
			w.nonMirror = append(w.nonMirror, static)
			w.statics = append(w.statics, static)
			w.mirrors = append(w.mirrors, mirror)
		} else {
			pod := newPod("api-uid-"+strconv.Itoa(i), "api-"+strconv.Itoa(i), "ns-"+strconv.Itoa(i%10),
				map[string]string{sourceKey: "api"})
			w.all = append(w.all, pod)
			w.nonMirror = append(w.nonMirror, pod)
		}
	}
	for _, p := range w.nonMirror {
		w.fullNames = append(w.fullNames, p.Name+"_"+p.Namespace)
	}
	for _, p := range w.all {
		w.uids = append(w.uids, p.UID)
	}
	return w
}

// Sinks keep the compiler from dropping the calls under test.
var (
	sinkPod  *v1.Pod
	sinkBool bool
	sinkInt  int
	sinkUID  string
)

type method struct {
	name string
	run  func(pm podmanager.Manager, w *workload, b *testing.B)
}

var methods = []method{
	{"addPod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			pm.AddPod(w.all[j])
			if j++; j == len(w.all) {
				j = 0
			}
		}
	}},
	{"updatePod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			pm.UpdatePod(w.all[j])
			if j++; j == len(w.all) {
				j = 0
			}
		}
	}},
	{"removePod+addPod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			p := w.all[j]
			pm.RemovePod(p)
			pm.AddPod(p)
			if j++; j == len(w.all) {
				j = 0
			}
		}
	}},
	{"getPodByFullName", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			sinkPod, sinkBool = pm.GetPodByFullName(w.fullNames[j])
			if j++; j == len(w.fullNames) {
				j = 0
			}
		}
	}},
	{"getPodByName", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			p := w.nonMirror[j]
			sinkPod, sinkBool = pm.GetPodByName(p.Namespace, p.Name)
			if j++; j == len(w.nonMirror) {
				j = 0
			}
		}
	}},
	{"getPodByUID", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			sinkPod, sinkBool = pm.GetPodByUID(w.nonMirror[j].UID)
			if j++; j == len(w.nonMirror) {
				j = 0
			}
		}
	}},
	{"getPodByMirrorPod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			sinkPod, sinkBool = pm.GetPodByMirrorPod(w.mirrors[j])
			if j++; j == len(w.mirrors) {
				j = 0
			}
		}
	}},
	{"getMirrorPodByPod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			sinkPod, sinkBool = pm.GetMirrorPodByPod(w.statics[j])
			if j++; j == len(w.statics) {
				j = 0
			}
		}
	}},
	{"getPodAndMirrorPod", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			_, sinkPod, sinkBool = pm.GetPodAndMirrorPod(w.all[j])
			if j++; j == len(w.all) {
				j = 0
			}
		}
	}},
	{"getPods", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i := 0; i < b.N; i++ {
			sinkInt += len(pm.GetPods())
		}
	}},
	{"getPodsAndMirrorPods", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i := 0; i < b.N; i++ {
			pods, mirrors, orphans := pm.GetPodsAndMirrorPods()
			sinkInt += len(pods) + len(mirrors) + len(orphans)
		}
	}},
	{"translatePodUID", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i, j := 0, 0; i < b.N; i++ {
			sinkUID = string(pm.TranslatePodUID(w.uids[j]))
			if j++; j == len(w.uids) {
				j = 0
			}
		}
	}},
	{"getUIDTranslations", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i := 0; i < b.N; i++ {
			podToMirror, mirrorToPod := pm.GetUIDTranslations()
			sinkInt += len(podToMirror) + len(mirrorToPod)
		}
	}},
	// v1.34 still has SetPods (its doc says it is for tests); it resets and reloads everything.
	{"setPods", func(pm podmanager.Manager, w *workload, b *testing.B) {
		for i := 0; i < b.N; i++ {
			pm.SetPods(w.all)
		}
	}},
}

type result struct {
	Method     string  `json:"method"`
	Size       int     `json:"size"`
	NsPerOp    float64 `json:"nsPerOp"`
	Iterations int     `json:"iterations"`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "oracle" {
		oracleMain()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "decode" {
		decodeMain()
		return
	}
	testing.Init()
	sizesFlag := flag.String("sizes", "100,10000,100000", "comma-separated pod counts")
	benchtime := flag.Duration("benchtime", 300*time.Millisecond, "target time per method and size")
	only := flag.String("only", "", "run only this method")
	flag.Parse()
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, field := range strings.Split(*sizesFlag, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || size < 10 {
			fmt.Fprintf(os.Stderr, "bad size %q (need an integer >= 10)\n", field)
			os.Exit(2)
		}
		w := buildWorkload(size)
		for _, m := range methods {
			if *only != "" && m.name != *only {
				continue
			}
			pm := podmanager.NewBasicPodManager()
			pm.SetPods(w.all)
			r := testing.Benchmark(func(b *testing.B) { m.run(pm, w, b) })
			if r.N == 0 {
				fmt.Fprintf(os.Stderr, "%s at %d did not run\n", m.name, size)
				os.Exit(1)
			}
			_ = enc.Encode(result{m.name, size, float64(r.T.Nanoseconds()) / float64(r.N), r.N})
		}
	}
}
