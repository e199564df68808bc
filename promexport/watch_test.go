package promexport

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"tokscope/watch"
)

// TestWatchReexport: each known figure of each row is a gauge with the row's server, model
// and kind; an unknown figure is absent (never 0); a STALE server is up 0; no URL anywhere.
func TestWatchReexport(t *testing.T) {
	w := NewWatch()
	gen, ttft, errText := 345.6, 100.0, "timeout"
	scraped := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	w.Set([]watch.Row{
		{Server: "gpu-1", URL: "http://10.0.0.1:8000", Model: "qwen", Kind: watch.KindVLLM, GenTPS: &gen,
			TTFT: &watch.Quantiles{P50: &ttft, Estimate: true}, ScrapedAt: &scraped},
		{Server: "gpu-2", URL: "http://10.0.0.2:8000", Kind: watch.KindVLLM, LastError: &errText},
	})
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`tokscope_watch_generation_tokens_per_second{kind="vllm",model="qwen",server="gpu-1"} 345.6`,
		`tokscope_watch_ttft_p50_milliseconds{kind="vllm",model="qwen",server="gpu-1"} 100`,
		`tokscope_watch_up{kind="vllm",model="qwen",server="gpu-1"} 1`,
		`tokscope_watch_up{kind="vllm",model="",server="gpu-2"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	for _, absent := range []string{`tokscope_watch_generation_tokens_per_second{kind="vllm",model="",server="gpu-2"}`, "10.0.0", "ttft_p99"} {
		if strings.Contains(text, absent) {
			t.Errorf("exposition has %s", absent)
		}
	}
}
