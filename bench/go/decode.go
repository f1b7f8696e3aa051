// The decode mode (`podmanagerbench decode`): runs manifests through the steps the kubelet's
// file and HTTP sources take before they add their own static-pod defaults (pkg/kubelet/config,
// tryDecodeSinglePod): YAML to JSON, the legacy scheme's universal decoder (v1 defaulting, then
// conversion to the internal Pod), and the conversion back to v1. A test decodes the same
// manifests with src/sources and compares the pods field by field.
//
// Input on stdin: one JSON value per manifest, {"manifest":"<YAML or JSON text>"}.
// Output on stdout: one line per manifest, {"pod":<v1.Pod as encoding/json writes it>} or
// {"error":"<why the decoder refused it>"}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	api "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
)

type decodeInput struct {
	Manifest string `json:"manifest"`
}

type decodeOutput struct {
	Pod   *v1.Pod `json:"pod,omitempty"`
	Error string  `json:"error,omitempty"`
}

func decodeManifest(text string) (*v1.Pod, error) {
	data, err := utilyaml.ToJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	obj, err := runtime.Decode(legacyscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		return nil, err
	}
	internal, ok := obj.(*api.Pod)
	if !ok {
		return nil, fmt.Errorf("not a pod: %T", obj)
	}
	out := &v1.Pod{}
	if err := k8sv1.Convert_core_Pod_To_v1_Pod(internal, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func decodeMain() {
	dec := json.NewDecoder(bufio.NewReader(os.Stdin))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	for {
		var in decodeInput
		if err := dec.Decode(&in); err == io.EOF {
			return
		} else if err != nil {
			_ = enc.Encode(decodeOutput{Error: "bad input line: " + err.Error()})
			return
		}
		pod, err := decodeManifest(in.Manifest)
		if err != nil {
			_ = enc.Encode(decodeOutput{Error: err.Error()})
		} else {
			_ = enc.Encode(decodeOutput{Pod: pod})
		}
		// One answer per line as soon as it is known: the test reads them in step.
		w.Flush()
	}
}
