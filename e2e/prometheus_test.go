package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestPrometheusScrapesTokscope runs a headless tokscope with --metrics-listen against the
// built-in simulator, has a real Prometheus server scrape it on loopback, then stops tokscope
// with SIGINT and checks Prometheus' view against tokscope's own JSON summary: the TTFT
// median from the histogram lies in the bucket holding tokscope's exact median, and the
// request and token totals agree up to what finished after Prometheus' last scrape (and, for
// tokens, counted live, what was in flight then).
func TestPrometheusScrapesTokscope(t *testing.T) {
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed: apt-get install -y prometheus (.ci/run does)")
	}
	bin := promBuildTokscope(t)
	dir := t.TempDir()
	metricsPort, promPort := promFreePort(t), promFreePort(t)

	// tokscope: 4 demo endpoints, short answers, until interrupted. flaky-cloud stalls now and
	// then by design; --timeout ends such a request in seconds instead of the 30 s stall limit.
	tok := exec.Command(bin, "--demo", "--no-tui", "--duration", "0", "-o", "json", "--max-tokens", "48", "-i", "200ms", "--timeout", "4s",
		"--metrics-listen", fmt.Sprintf("127.0.0.1:%d", metricsPort))
	stdout, err := tok.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, _ := os.Create(filepath.Join(dir, "tokscope.stderr"))
	tok.Stderr = stderr
	if err := tok.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tok.Process.Kill(); tok.Wait() })
	summary := make(chan []byte, 1)
	go func() { b, _ := io.ReadAll(stdout); summary <- b }()

	cfg := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`global: {scrape_interval: 250ms, scrape_timeout: 200ms}
scrape_configs:
  - job_name: tokscope
    static_configs: [{targets: ["127.0.0.1:%d"]}]
`, metricsPort)), 0o600)
	promCmd := exec.Command(prom, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort))
	promLog, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	promCmd.Stdout, promCmd.Stderr = promLog, promLog
	if err := promCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { promCmd.Process.Kill(); promCmd.Wait() })
	api := fmt.Sprintf("http://127.0.0.1:%d/api/v1/query", promPort)

	// Wait until Prometheus holds at least 6 requests of every endpoint.
	deadline := time.Now().Add(75 * time.Second)
	for {
		v, err := promQuery(api, `min(sum by (endpoint) (tokscope_requests_total))`)
		if err == nil && len(v) == 1 && v[0].value >= 6 {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "prometheus.log"))
			t.Fatalf("Prometheus never saw 6 requests per endpoint (last: %v, %v)\n%s", v, err, promTail(string(b), 2000))
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Stop tokscope right after a fresh scrape, then read both views.
	lastScrape := func() float64 {
		v, _ := promQuery(api, `timestamp(up{job="tokscope"})`)
		if len(v) == 0 {
			return 0
		}
		return v[0].value
	}
	before := lastScrape()
	for lastScrape() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	tok.Process.Signal(syscall.SIGINT)
	var out []byte
	select {
	case out = <-summary:
	case <-time.After(30 * time.Second):
		t.Fatal("tokscope did not print its summary within 30 s of SIGINT")
	}
	tok.Wait()
	var doc struct {
		Endpoints []struct {
			Name         string `json:"name"`
			Requests     int    `json:"requests"`
			OutputTokens int    `json:"output_tokens"`
			TTFT         *struct {
				P50 float64 `json:"p50"`
			} `json:"ttft_ms"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, out)
	}
	time.Sleep(500 * time.Millisecond) // let Prometheus mark the target down; its data stays

	ttftQ, err := promQuery(api, `histogram_quantile(0.5, sum by (le, endpoint) (last_over_time(tokscope_time_to_first_token_seconds_bucket[1m])))`)
	if err != nil {
		t.Fatal(err)
	}
	requests, err := promQuery(api, `sum by (endpoint) (last_over_time(tokscope_requests_total[1m]))`)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := promQuery(api, `sum by (endpoint) (last_over_time(tokscope_generation_tokens_total[1m]))`)
	if err != nil {
		t.Fatal(err)
	}
	byEndpoint := func(s []promSample) map[string]float64 {
		m := map[string]float64{}
		for _, x := range s {
			m[x.endpoint] = x.value
		}
		return m
	}
	pq, pr, pt := byEndpoint(ttftQ), byEndpoint(requests), byEndpoint(tokens)
	buckets := []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10}
	if len(doc.Endpoints) != 4 {
		t.Fatalf("summary has %d endpoints", len(doc.Endpoints))
	}
	for _, ep := range doc.Endpoints {
		if ep.TTFT == nil {
			t.Errorf("%s: no TTFT in the summary", ep.Name)
			continue
		}
		exact := ep.TTFT.P50 / 1000
		lo, hi := bucketOf(buckets, exact)
		if got := pq[ep.Name]; got < lo || got > hi {
			t.Errorf("%s: Prometheus TTFT p50 %.4f s outside the bucket (%.3f, %.3f] holding tokscope's p50 %.4f s", ep.Name, got, lo, hi, exact)
		}
		// What finished after the last scrape is in the summary but not in Prometheus.
		if d := float64(ep.Requests) - pr[ep.Name]; d < 0 || d > 3 {
			t.Errorf("%s: summary requests %d, Prometheus %.0f", ep.Name, ep.Requests, pr[ep.Name])
		}
		// Tokens count as they arrive: the last scrape may also hold tokens of requests then
		// in flight that SIGINT cut (one stream per endpoint: at most 48), and those owed back
		// by a failed request that no later token had paid yet.
		if d := float64(ep.OutputTokens) - pt[ep.Name]; d < -2*48 || d > 3*48 {
			t.Errorf("%s: summary output tokens %d, Prometheus %.0f", ep.Name, ep.OutputTokens, pt[ep.Name])
		}
	}
	t.Logf("Prometheus TTFT p50 by endpoint %v; requests %v; tokens %v", pq, pr, pt)
}

type promSample struct {
	endpoint string
	value    float64
}

// query runs an instant PromQL query against Prometheus' HTTP API.
func promQuery(api, q string) ([]promSample, error) {
	resp, err := http.Get(api + "?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("query %q: %s", q, r.Error)
	}
	var out []promSample
	for _, x := range r.Data.Result {
		s, _ := x.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, promSample{x.Metric["endpoint"], v})
	}
	return out, nil
}

func bucketOf(bounds []float64, v float64) (lo, hi float64) {
	for _, b := range bounds {
		if v <= b {
			return lo, b
		}
		lo = b
	}
	return lo, lo * 10
}

func promFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func promTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// promBuildTokscope builds the binary under test into a temporary directory.
func promBuildTokscope(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tokscope")
	cmd := exec.Command("go", "build", "-o", bin, "tokscope")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
