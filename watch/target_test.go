package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8000/v1": "http://127.0.0.1:8000/metrics",
		"127.0.0.1:8086":           "http://127.0.0.1:8086/metrics",
		"https://h.example:443/":   "https://h.example:443/metrics",
	} {
		tg, err := NewTarget(in, "url")
		if err != nil || tg.Key() != want {
			t.Errorf("NewTarget(%q) = %q, %v; want %q", in, tg.Key(), err, want)
		}
	}
	if _, err := NewTarget("ftp://x", "url"); err == nil {
		t.Error("ftp accepted")
	}
}

// TestTargetsFileFormats: Prometheus' file service discovery, JSON and YAML, with its
// __scheme__ and __metrics_path__ labels.
func TestTargetsFileFormats(t *testing.T) {
	js := `[{"targets": ["10.0.0.1:8000", "10.0.0.2:8000"], "labels": {"job": "vllm", "__metrics_path__": "/m"}},
	        {"targets": ["gpu-3:8080"], "labels": {"name": "big", "__scheme__": "https", "gpu_metrics": "http://gpu-3:9400/metrics"}}]`
	yml := "- targets: ['10.0.0.1:8000', '10.0.0.2:8000']\n  labels: {job: vllm, __metrics_path__: /m}\n" +
		"- targets: [gpu-3:8080]\n  labels:\n    name: big\n    __scheme__: https\n    gpu_metrics: http://gpu-3:9400/metrics\n"
	for name, src := range map[string]string{"t.json": js, "t.yaml": yml} {
		ts, err := ParseTargetsFile(name, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ts) != 3 || ts[0].Key() != "http://10.0.0.1:8000/m" || ts[0].Labels["job"] != "vllm" || ts[0].Name != "10.0.0.1:8000" {
			t.Errorf("%s: %+v", name, ts)
		}
		if ts[2].Key() != "https://gpu-3:8080/metrics" || ts[2].Name != "big" || ts[2].GPUMetrics != "http://gpu-3:9400/metrics" {
			t.Errorf("%s: third %+v", name, ts[2])
		}
		if _, hidden := ts[0].Labels["__metrics_path__"]; hidden {
			t.Errorf("%s: a __ label kept", name)
		}
	}
}

func TestTargetsFileErrors(t *testing.T) {
	cases := map[string]string{
		"- targets: [a:1]\n  lables: {x: y}\n": `t.yaml:2:3: unknown field "lables" (did you mean "labels"?)`,
		"- targets: [http://a:1/x]\n":          "want host:port",
		"[{\"targets\": 3}]":                   "t.yaml:1:14",
	}
	for src, want := range cases {
		_, err := ParseTargetsFile("t.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want %q in it", src, err, want)
		}
	}
}

// TestFollowTargetsFile: a change of the file brings its new targets; a broken file is an
// error and keeps the old ones.
func TestFollowTargetsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "targets.json")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"targets": ["a:1"]}]`)
	changes, errs := make(chan []Target, 4), make(chan error, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, _ := os.ReadFile(path)
	go FollowTargetsFile(ctx, path, 20*time.Millisecond, first, func(ts []Target) { changes <- ts }, func(err error) { errs <- err })
	write(`[{"targets": ["a:1", "b:2"]}]`)
	select {
	case ts := <-changes:
		if len(ts) != 2 || ts[1].Name != "b:2" {
			t.Errorf("targets %+v", ts)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no change seen")
	}
	write(`[{"targets": [`)
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "targets.json") {
			t.Errorf("error %v does not name the file", err)
		}
	case ts := <-changes:
		t.Fatalf("a broken file gave targets %+v", ts)
	case <-time.After(5 * time.Second):
		t.Fatal("no error for a broken file")
	}
}
