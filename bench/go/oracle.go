// The oracle mode (`podmanagerbench oracle`): replays call sequences on the kubelet's own
// basicManager and prints what every query answered, so a test can run the same sequences
// through src/pod/manager.ts and compare answer by answer.
//
// Input on stdin: one JSON sequence per line (or any stream of JSON values):
//
//	{"pods":[<v1.Pod JSON>…], "calls":[{"op":"addPod","pod":0}, {"op":"getPods"}, …]}
//
// Calls name pods by their index in "pods". Every index stands for one *v1.Pod for the whole
// sequence, so answers can say which object the manager returned, not just an equal one.
// Each sequence starts from a fresh NewBasicPodManager() and the ephemeral container gauge at 0.
//
// Output on stdout, per sequence: one line per query, {"call":<index in calls>,"answer":…},
// then {"end":true,"queries":<count>}. A malformed sequence gives {"error":…} and ends there.
// Answers are canonical: pods are their indices, lists that Go fills in map order are sorted,
// maps are JSON objects (encoding/json sorts their keys), "not found" is null.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/component-base/metrics/legacyregistry"
	kubecontainer "k8s.io/kubernetes/pkg/kubelet/container"
	kubeletmetrics "k8s.io/kubernetes/pkg/kubelet/metrics"
	podmanager "k8s.io/kubernetes/pkg/kubelet/pod"
	kubetypes "k8s.io/kubernetes/pkg/kubelet/types"
)

type oracleSequence struct {
	Pods  []json.RawMessage `json:"pods"`
	Calls []oracleCall      `json:"calls"`
}

// oracleCall holds the arguments of every op; each op reads only its own.
type oracleCall struct {
	Op        string  `json:"op"`
	Pod       *int    `json:"pod"`
	Pods      []int   `json:"pods"`
	MirrorPod *int    `json:"mirrorPod"`
	UID       *string `json:"uid"`
	FullName  *string `json:"fullName"`
	Namespace *string `json:"namespace"`
	Name      *string `json:"name"`
}

type answerLine struct {
	Call   int `json:"call"`
	Answer any `json:"answer"`
}

type endLine struct {
	End     bool `json:"end"`
	Queries int  `json:"queries"`
}

type errorLine struct {
	Error string `json:"error"`
	Call  *int   `json:"call,omitempty"`
}

const ephemeralGaugeName = "kubelet_" + kubeletmetrics.ManagedEphemeralContainersKey

func runOracle(in io.Reader, out io.Writer) error {
	// The gauge is a process-wide global that counts only once registered.
	legacyregistry.MustRegister(kubeletmetrics.ManagedEphemeralContainers)
	w := bufio.NewWriterSize(out, 1<<16)
	enc := json.NewEncoder(w)
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<16))
	for {
		var seq oracleSequence
		if err := dec.Decode(&seq); err == io.EOF {
			return w.Flush()
		} else if err != nil {
			// The stream cannot be resynchronised after a syntax error.
			_ = enc.Encode(errorLine{Error: "decode sequence: " + err.Error()})
			_ = w.Flush()
			return err
		}
		replay(&seq, enc)
		// One flush per sequence: a test that writes one sequence and waits for its end line
		// must see it without closing stdin.
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// replay runs one sequence. A panic in the kubelet's code becomes the answer of the call that
// caused it and ends the sequence, so the test sees which call it was.
func replay(seq *oracleSequence, enc *json.Encoder) {
	pods := make([]*v1.Pod, len(seq.Pods))
	index := make(map[*v1.Pod]int, len(seq.Pods))
	for i, raw := range seq.Pods {
		pod := &v1.Pod{}
		if err := json.Unmarshal(raw, pod); err != nil {
			_ = enc.Encode(errorLine{Error: fmt.Sprintf("decode pod %d: %v", i, err)})
			return
		}
		pods[i] = pod
		index[pod] = i
	}
	kubeletmetrics.ManagedEphemeralContainers.Set(0)
	pm := podmanager.NewBasicPodManager()
	queries := 0
	for i := range seq.Calls {
		call := &seq.Calls[i]
		answer, isQuery, err := runCall(pm, pods, index, call)
		if err != nil {
			at := i
			_ = enc.Encode(errorLine{Error: err.Error(), Call: &at})
			return
		}
		if isQuery {
			queries++
			_ = enc.Encode(answerLine{Call: i, Answer: answer})
		}
	}
	_ = enc.Encode(endLine{End: true, Queries: queries})
}

func runCall(pm podmanager.Manager, pods []*v1.Pod, index map[*v1.Pod]int, call *oracleCall) (answer any, isQuery bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			answer, isQuery, err = map[string]string{"panic": fmt.Sprint(r)}, true, nil
		}
	}()
	pod := func(at *int, what string) (*v1.Pod, error) {
		if at == nil || *at < 0 || *at >= len(pods) {
			return nil, fmt.Errorf("%s: %q needs a pod index below %d", call.Op, what, len(pods))
		}
		return pods[*at], nil
	}
	str := func(s *string, what string) (string, error) {
		if s == nil {
			return "", fmt.Errorf("%s: %q is missing", call.Op, what)
		}
		return *s, nil
	}
	ref := func(p *v1.Pod, found bool) any {
		if !found {
			return nil
		}
		if i, ok := index[p]; ok {
			return i
		}
		// Never expected: the manager only holds pods of this sequence.
		return "foreign pod"
	}

	switch call.Op {
	case "addPod", "updatePod", "removePod":
		p, err := pod(call.Pod, "pod")
		if err != nil {
			return nil, false, err
		}
		switch call.Op {
		case "addPod":
			pm.AddPod(p)
		case "updatePod":
			pm.UpdatePod(p)
		default:
			pm.RemovePod(p)
		}
		return nil, false, nil
	case "setPods":
		list := make([]*v1.Pod, 0, len(call.Pods))
		for k := range call.Pods {
			p, err := pod(&call.Pods[k], "pods")
			if err != nil {
				return nil, false, err
			}
			list = append(list, p)
		}
		pm.SetPods(list)
		return nil, false, nil

	case "getPods":
		return podRefs(pm.GetPods(), index), true, nil
	case "getPodsAndMirrorPods":
		all, mirrors, orphans := pm.GetPodsAndMirrorPods()
		if orphans == nil {
			orphans = []string{}
		}
		sort.Strings(orphans)
		return map[string]any{
			"pods":                       podRefs(all, index),
			"mirrorPods":                 podRefs(mirrors, index),
			"orphanedMirrorPodFullNames": orphans,
		}, true, nil
	case "getUIDTranslations":
		podToMirror, mirrorToPod := pm.GetUIDTranslations()
		return map[string]any{"podToMirror": podToMirror, "mirrorToPod": mirrorToPod}, true, nil
	case "getPodByUID":
		uid, err := str(call.UID, "uid")
		if err != nil {
			return nil, false, err
		}
		return ref(pm.GetPodByUID(types.UID(uid))), true, nil
	case "translatePodUID":
		uid, err := str(call.UID, "uid")
		if err != nil {
			return nil, false, err
		}
		return string(pm.TranslatePodUID(types.UID(uid))), true, nil
	case "getPodByFullName":
		name, err := str(call.FullName, "fullName")
		if err != nil {
			return nil, false, err
		}
		return ref(pm.GetPodByFullName(name)), true, nil
	case "getPodByName":
		namespace, err := str(call.Namespace, "namespace")
		if err != nil {
			return nil, false, err
		}
		name, err := str(call.Name, "name")
		if err != nil {
			return nil, false, err
		}
		return ref(pm.GetPodByName(namespace, name)), true, nil
	case "getPodByMirrorPod", "getMirrorPodByPod", "getPodAndMirrorPod", "classifyPod":
		p, err := pod(call.Pod, "pod")
		if err != nil {
			return nil, false, err
		}
		switch call.Op {
		case "getPodByMirrorPod":
			return ref(pm.GetPodByMirrorPod(p)), true, nil
		case "getMirrorPodByPod":
			return ref(pm.GetMirrorPodByPod(p)), true, nil
		case "getPodAndMirrorPod":
			got, mirror, wasMirror := pm.GetPodAndMirrorPod(p)
			return map[string]any{"pod": ref(got, got != nil), "mirrorPod": ref(mirror, mirror != nil), "wasMirror": wasMirror}, true, nil
		default:
			return classify(p), true, nil
		}
	case "isMirrorPodOf":
		mirror, err := pod(call.MirrorPod, "mirrorPod")
		if err != nil {
			return nil, false, err
		}
		p, err := pod(call.Pod, "pod")
		if err != nil {
			return nil, false, err
		}
		return podmanager.IsMirrorPodOf(mirror, p), true, nil
	case "ephemeralContainers":
		value, err := ephemeralGauge()
		return value, err == nil, err
	default:
		return nil, false, fmt.Errorf("unknown op %q", call.Op)
	}
}

// classify answers what the kubelet's pod helpers say about one pod: the checks the manager
// and the mirror logic branch on.
func classify(p *v1.Pod) map[string]any {
	var source any
	if s, err := kubetypes.GetPodSource(p); err == nil {
		source = s
	}
	return map[string]any{
		"fullName":   kubecontainer.GetPodFullName(p),
		"isMirror":   kubetypes.IsMirrorPod(p),
		"isStatic":   kubetypes.IsStaticPod(p),
		"isCritical": kubetypes.IsCriticalPod(p),
		"source":     source,
	}
}

// podRefs turns a list of stored pods into their sorted indices: Go builds these lists from
// maps, so their order carries no meaning.
func podRefs(list []*v1.Pod, index map[*v1.Pod]int) []int {
	refs := make([]int, 0, len(list))
	for _, p := range list {
		i, ok := index[p]
		if !ok {
			i = -1
		}
		refs = append(refs, i)
	}
	sort.Ints(refs)
	return refs
}

// ephemeralGauge reads the gauge itself: gathering the whole registry would also run the
// process and Go collectors, which costs more than everything else the oracle does.
func ephemeralGauge() (float64, error) {
	var m dto.Metric
	if err := kubeletmetrics.ManagedEphemeralContainers.Write(&m); err != nil {
		return 0, fmt.Errorf("read %s: %w", ephemeralGaugeName, err)
	}
	return m.GetGauge().GetValue(), nil
}

func oracleMain() {
	if err := runOracle(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
