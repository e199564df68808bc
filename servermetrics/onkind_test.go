package servermetrics

import (
	"context"
	"sync"
	"testing"
	"time"

	"tokscope/config"
)

// OnKind says each endpoint's server kind once, at the first scrape that recognises it; a
// server whose families say nothing known is never named.
func TestOnKindOncePerEndpoint(t *testing.T) {
	for _, tc := range []struct {
		metrics string
		want    Kind
	}{
		{"# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\n", KindVLLM},
		{"# TYPE llamacpp:requests_processing gauge\nllamacpp:requests_processing 1\n", KindLlamaCpp},
		{"# TYPE http_requests_total counter\nhttp_requests_total 3\n", ""},
	} {
		srv := newScripted(t, func(float64) string { return tc.metrics })
		var mu sync.Mutex
		said := map[int][]Kind{}
		eps := []config.Endpoint{endpoint(srv.srv.URL, "m"), endpoint(srv.srv.URL, "m")}
		s := New(eps, Auto, Options{Interval: 20 * time.Millisecond, Timeout: time.Second,
			OnKind: func(i int, k Kind) { mu.Lock(); said[i] = append(said[i], k); mu.Unlock() }})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		go func() {
			for range s.Updates() {
			}
		}()
		s.Run(ctx)
		cancel()
		mu.Lock()
		for i := range eps {
			switch {
			case tc.want == "" && len(said[i]) > 0:
				t.Errorf("unknown families: endpoint %d named %v", i, said[i])
			case tc.want != "" && (len(said[i]) != 1 || said[i][0] != tc.want):
				t.Errorf("endpoint %d named %v, want %q once", i, said[i], tc.want)
			}
		}
		mu.Unlock()
	}
}
