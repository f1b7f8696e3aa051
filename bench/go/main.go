// Command podmanagerbench times the kubelet's basicManager (k8s.io/kubernetes/pkg/kubelet/pod,
// v1.34) on the workloads of bench/pod-manager.bench.ts and prints one JSON line per
// (method, size): {"method":…,"size":…,"nsPerOp":…,"iterations":…}, nsPerOp being CPU time per
// call, measured as the TS harness measures it (see measure).
//
// The workload must stay in step with bench/workload.ts: N non-mirror pods, every tenth one a
// static pod (source "file") with a mirror pod; the others API pods spread over ten namespaces.
// Per-op methods walk a fixed list of targets round-robin so lookups hit different keys, with a
// wrapping index as the TS side does: `i%len` costs an integer division per call, which at
// 20-40 ns per lookup was a visible share of what the Go column charged to the kubelet.
// With -serve (one size) it builds the workload, prints {"ready":true}, and then times each
// method named on a line of stdin: bench/run.ts asks it and the TS side in turn, method by method.
//
// `podmanagerbench oracle` does not time anything: it replays call sequences read from stdin
// and prints every answer (see oracle.go), for test/integration/pod-manager-oracle.test.ts.
// `podmanagerbench decode` decodes manifests as the kubelet's sources do (see decode.go), for
// test/integration/pod-defaults-oracle.test.ts.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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

// buildWorkload makes the pods and passes them through JSON once, as bench/workload.ts does (the
// agent parses the pods it gets); for Go this only gives each pod strings of its own.
func buildWorkload(size int) *workload {
	var built []*v1.Pod
	for i := 0; i < size; i++ {
		if i%10 == 0 {
			uid := "static-uid-" + strconv.Itoa(i)
			name := "static-" + strconv.Itoa(i)
			built = append(built,
				newPod(uid, name, "kube-system", map[string]string{sourceKey: "file", hashKey: uid}),
				newPod("mirror-uid-"+strconv.Itoa(i), name, "kube-system",
					map[string]string{sourceKey: "api", mirrorKey: uid}))
		} else {
			built = append(built, newPod("api-uid-"+strconv.Itoa(i), "api-"+strconv.Itoa(i),
				"ns-"+strconv.Itoa(i%10), map[string]string{sourceKey: "api"}))
		}
	}
	data, err := json.Marshal(built)
	if err != nil {
		panic(err)
	}
	w := &workload{}
	if err := json.Unmarshal(data, &w.all); err != nil {
		panic(err)
	}
	for _, p := range w.all {
		if _, ok := p.Annotations[mirrorKey]; ok {
			w.mirrors = append(w.mirrors, p)
			continue
		}
		w.nonMirror = append(w.nonMirror, p)
		if p.Annotations[sourceKey] == "file" {
			w.statics = append(w.statics, p)
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
	// perSample is batch for per-pod methods, 1 for whole-manager ones, and wholeBatch(size)
	// for GetPods and GetPodsAndMirrorPods (see there).
	perSample int
	// sample returns one sample's work: perSample calls, a per-pod method resuming where its
	// previous sample stopped (each loop is written out so no call is added per op).
	sample func(pm podmanager.Manager, w *workload) func()
}

// batch is the number of calls per sample of a per-pod method, as in the TS harness.
const batch = 1024

// wholeBatch marks GetPods and GetPodsAndMirrorPods, which copy every pod on each call: a
// sample of batch calls would take seconds at 100,000 pods, so their samples hold
// wholeBatchFor(size) calls, about 100,000 pods copied, as many as a sample at 100 pods.
const wholeBatch = -1

func wholeBatchFor(size int) int {
	if n := batch * 100 / size; n > 1 {
		return n
	}
	return 1
}

var methods = []method{
	{"addPod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				pm.AddPod(w.all[j])
				if j++; j == len(w.all) {
					j = 0
				}
			}
		}
	}},
	{"updatePod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				pm.UpdatePod(w.all[j])
				if j++; j == len(w.all) {
					j = 0
				}
			}
		}
	}},
	{"removePod+addPod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				p := w.all[j]
				pm.RemovePod(p)
				pm.AddPod(p)
				if j++; j == len(w.all) {
					j = 0
				}
			}
		}
	}},
	{"getPodByFullName", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				sinkPod, sinkBool = pm.GetPodByFullName(w.fullNames[j])
				if j++; j == len(w.fullNames) {
					j = 0
				}
			}
		}
	}},
	{"getPodByName", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				p := w.nonMirror[j]
				sinkPod, sinkBool = pm.GetPodByName(p.Namespace, p.Name)
				if j++; j == len(w.nonMirror) {
					j = 0
				}
			}
		}
	}},
	{"getPodByUID", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				sinkPod, sinkBool = pm.GetPodByUID(w.nonMirror[j].UID)
				if j++; j == len(w.nonMirror) {
					j = 0
				}
			}
		}
	}},
	{"getPodByMirrorPod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				sinkPod, sinkBool = pm.GetPodByMirrorPod(w.mirrors[j])
				if j++; j == len(w.mirrors) {
					j = 0
				}
			}
		}
	}},
	{"getMirrorPodByPod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				sinkPod, sinkBool = pm.GetMirrorPodByPod(w.statics[j])
				if j++; j == len(w.statics) {
					j = 0
				}
			}
		}
	}},
	{"getPodAndMirrorPod", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				_, sinkPod, sinkBool = pm.GetPodAndMirrorPod(w.all[j])
				if j++; j == len(w.all) {
					j = 0
				}
			}
		}
	}},
	{"getPods", wholeBatch, func(pm podmanager.Manager, w *workload) func() {
		n := wholeBatchFor(len(w.nonMirror))
		return func() {
			for i := 0; i < n; i++ {
				sinkInt += len(pm.GetPods())
			}
		}
	}},
	{"getPodsAndMirrorPods", wholeBatch, func(pm podmanager.Manager, w *workload) func() {
		n := wholeBatchFor(len(w.nonMirror))
		return func() {
			for i := 0; i < n; i++ {
				pods, mirrors, orphans := pm.GetPodsAndMirrorPods()
				sinkInt += len(pods) + len(mirrors) + len(orphans)
			}
		}
	}},
	{"translatePodUID", batch, func(pm podmanager.Manager, w *workload) func() {
		j := 0
		return func() {
			for i := 0; i < batch; i++ {
				sinkUID = string(pm.TranslatePodUID(w.uids[j]))
				if j++; j == len(w.uids) {
					j = 0
				}
			}
		}
	}},
	{"getUIDTranslations", 1, func(pm podmanager.Manager, w *workload) func() {
		return func() {
			podToMirror, mirrorToPod := pm.GetUIDTranslations()
			sinkInt += len(podToMirror) + len(mirrorToPod)
		}
	}},
	// v1.34 still has SetPods (its doc says it is for tests); it resets and reloads everything.
	{"setPods", 1, func(pm podmanager.Manager, w *workload) func() {
		return func() { pm.SetPods(w.all) }
	}},
}

type result struct {
	Method     string  `json:"method"`
	Size       int     `json:"size"`
	NsPerOp    float64 `json:"nsPerOp"`
	Iterations int     `json:"iterations"`
}

// cpuNow is the CPU time this process has used (all threads, user and system), the clock the
// TS harness reads with process.cpuUsage(): on a shared machine, wall time would also count the
// time the process waited for a core.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs sample for budget of CPU time and at least minSamples times, after a warm-up of
// a third of the budget (at most 100 ms) and minSamples/4 samples (at least 2), and returns
// the mean CPU time per call. The TS harness does the same with tinybench.
func measure(sample func(), perSample int, budget time.Duration, minSamples int) (float64, int) {
	warmBudget := budget / 3
	if warmBudget > 100*time.Millisecond {
		warmBudget = 100 * time.Millisecond
	}
	warmSamples := minSamples / 4
	if warmSamples < 2 {
		warmSamples = 2
	}
	for n, start := 0, cpuNow(); n < warmSamples || cpuNow()-start < warmBudget; n++ {
		sample()
	}
	var total time.Duration
	n := 0
	for n < minSamples || total < budget {
		before := cpuNow()
		sample()
		total += cpuNow() - before
		n++
	}
	return float64(total.Nanoseconds()) / float64(n*perSample), n * perSample
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
	sizesFlag := flag.String("sizes", "100,10000,100000", "comma-separated pod counts")
	budget := flag.Duration("benchtime", 300*time.Millisecond, "CPU time measured per method and size")
	minSamples := flag.Int("minsamples", 20, "samples measured at least per method and size")
	only := flag.String("only", "", "run only this method")
	serve := flag.Bool("serve", false, "one size: build its workload, print {\"ready\":true}, then time each method named on a line of stdin")
	flag.Parse()
	enc := json.NewEncoder(os.Stdout)
	var sizes []int
	for _, field := range strings.Split(*sizesFlag, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil || size < 10 {
			fmt.Fprintf(os.Stderr, "bad size %q (need an integer >= 10)\n", field)
			os.Exit(2)
		}
		sizes = append(sizes, size)
	}
	if *serve {
		if len(sizes) != 1 {
			fmt.Fprintln(os.Stderr, "-serve takes one size")
			os.Exit(2)
		}
		serveMethods(sizes[0], *budget, *minSamples, enc)
		return
	}
	for _, size := range sizes {
		w := buildWorkload(size)
		for _, m := range methods {
			if *only != "" && m.name != *only {
				continue
			}
			_ = enc.Encode(timeMethod(m, w, size, *budget, *minSamples))
		}
	}
}

// serveMethods lets the harness time Go and TS method by method, one right after the other, so
// that both sides of a ratio see the same state of a shared machine.
func serveMethods(size int, budget time.Duration, minSamples int, enc *json.Encoder) {
	w := buildWorkload(size)
	byName := map[string]method{}
	for _, m := range methods {
		byName[m.name] = m
	}
	_ = enc.Encode(map[string]bool{"ready": true})
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		name := strings.TrimSpace(lines.Text())
		m, ok := byName[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown method %q\n", name)
			os.Exit(2)
		}
		_ = enc.Encode(timeMethod(m, w, size, budget, minSamples))
	}
}

// timeMethod times one method on a fresh manager loaded with the workload.
func timeMethod(m method, w *workload, size int, budget time.Duration, minSamples int) result {
	pm := podmanager.NewBasicPodManager()
	pm.SetPods(w.all)
	sample := m.sample(pm, w)
	perSample := m.perSample
	if perSample == wholeBatch {
		perSample = wholeBatchFor(size)
	} else if perSample == batch {
		// Every target once before timing, as the TS harness does.
		for n := 0; n*batch < len(w.all); n++ {
			sample()
		}
	}
	// testing.Benchmark collected garbage before each run; kept, and the TS side does it too.
	runtime.GC()
	nsPerOp, calls := measure(sample, perSample, budget, minSamples)
	return result{m.name, size, nsPerOp, calls}
}
