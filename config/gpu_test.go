package config

import (
	"errors"
	"strings"
	"testing"
)

// gpu_metrics: is read in defaults: and per endpoint (the endpoint's wins), and a bad URL is
// an error at its line and column.
func TestGPUMetrics(t *testing.T) {
	src := "defaults:\n  gpu_metrics: http://10.0.0.5:9400/metrics\nendpoints:\n" +
		"  - base_url: http://127.0.0.1:8080/v1\n    model: a\n" +
		"  - base_url: http://127.0.0.1:8081/v1\n    model: b\n    gpu_metrics: http://127.0.0.1:9400/metrics\n"
	cfg, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Endpoints[0].GPUMetrics; got != "http://10.0.0.5:9400/metrics" {
		t.Errorf("endpoint a: gpu_metrics %q, want the defaults' URL", got)
	}
	if got := cfg.Endpoints[1].GPUMetrics; got != "http://127.0.0.1:9400/metrics" {
		t.Errorf("endpoint b: gpu_metrics %q, want its own", got)
	}
	cfg.Apply(Overrides{GPUMetrics: gpuPtr("http://127.0.0.1:9500/metrics")})
	for _, e := range cfg.Endpoints {
		if e.GPUMetrics != "http://127.0.0.1:9500/metrics" {
			t.Errorf("%s: the flag's level did not replace gpu_metrics: %q", e.Name, e.GPUMetrics)
		}
	}

	for _, tc := range []struct {
		value, msg string
		col        int
	}{
		{"ftp://h:9400/metrics", "absolute http:// or https:// URL", 18},
		{"\"\"", "gpu_metrics is empty", 18},
		{"http://u:p@h:9400/metrics", "must not hold credentials", 18},
		{"http://h:9400/metrics?token=x", "query string", 18},
	} {
		src := "endpoints:\n  - base_url: http://127.0.0.1:8080/v1\n    model: a\n    gpu_metrics: " + tc.value + "\n"
		_, err := Parse("t.yaml", []byte(src))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%s: want a *config.Error, got %v", tc.value, err)
		}
		if ce.Line != 4 || ce.Col != tc.col || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%s: got %d:%d %q, want 4:%d and %q", tc.value, ce.Line, ce.Col, ce.Msg, tc.col, tc.msg)
		}
	}
}

func gpuPtr[T any](v T) *T { return &v }
