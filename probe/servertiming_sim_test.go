package probe

import (
	"math"
	"strings"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
	"tokscope/workload"
)

// Against the simulator, whose clock is known (sim.Server.Clock), tokscope reads every figure
// the server reported to the hundredth of a ms (the server writes 3 decimals; Ollama ns), and
// outside = client TTFT − server TTFT holds to within a ms of what the sim's own instants
// give: the time from t0 to admission plus the first token's trip to the client.
func TestServerTimingFromSim(t *testing.T) {
	t.Parallel()
	const headers = 8 * time.Millisecond
	cases := []struct {
		api, source string
		vllm        bool
	}{
		{config.APIChat, "llamacpp", false},
		{config.APICompletions, "llamacpp", false},
		{config.APIResponses, "llamacpp", false},
		{config.APIChat, "vllm", true},
		{config.APICompletions, "vllm", true},
		{config.APIOllama, "ollama", false},
	}
	for _, tc := range cases {
		t.Run(tc.api+"/"+tc.source, func(t *testing.T) {
			t.Parallel()
			p := sim.Profile{Name: "p", Model: "m", TTFT: 40 * time.Millisecond, HeadersDelay: headers,
				TokensPerSecond: 200, PrefixCache: true, Seed: 1, Timings: !tc.vllm, VLLMMetrics: tc.vllm}
			srv, err := sim.Start(sim.Options{TrackSends: true}, p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			ep := config.Endpoint{Name: "p", BaseURL: srv.BaseURLFor("p", tc.api), Model: "m", API: tc.api,
				MaxTokens: 20, Timeout: 10 * time.Second, Stall: 5 * time.Second}
			c := NewClient(ep)
			if tc.vllm {
				c.MarkVLLM()
			}
			t.Cleanup(c.CloseIdleConnections)
			req := workload.Request{Messages: []workload.Message{{Role: "user", Content: strings.TrimSpace(sim.Text(0, 40))}}, MaxTokens: 20}
			for i := 1; i <= 2; i++ { // the second is served partly from the prefix cache
				s := c.SendLive(t.Context(), req, Live{})
				outcome(t, s, sample.OutcomeOK, "")
				clock, ok := srv.Clock("chatcmpl-sim-" + string(rune('0'+i)))
				if !ok {
					t.Fatal("the sim kept no clock")
				}
				checkSimTiming(t, &s, clock, tc.source, headers)
			}
			if got := srv.IncludeMetricsSeen("p"); (got > 0) != tc.vllm {
				t.Errorf("include_metrics asked %d times, vLLM %v", got, tc.vllm)
			}
		})
	}
}

func checkSimTiming(t *testing.T, s *sample.Sample, c sim.Clock, source string, headers time.Duration) {
	t.Helper()
	st := s.Server
	if st == nil || st.Source != source {
		t.Fatalf("server timing %+v, want source %s", st, source)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s %.6f, want %.6f (± %g)", what, got, want, tol)
		}
	}
	const hundredth = 0.005 // the server writes 3 decimals: exact to the hundredth of a ms
	gen := ms(c.Last.Sub(c.First))
	switch source {
	case "llamacpp":
		near("prompt_ms", float64(st.TTFTms), ms(c.First.Sub(c.Admitted)), hundredth)
		near("predicted_ms", float64(st.DecodeMs), gen, hundredth)
		if st.DecodeTokens != sample.Figure(c.Completion) || st.CachedTokens != sample.Figure(c.Cached) || st.PromptTokens != sample.Figure(c.Prompt-c.Cached) {
			t.Errorf("counts %+v, want n %d cached %d prompt %d", *st, c.Completion, c.Cached, c.Prompt-c.Cached)
		}
	case "vllm":
		near("time_to_first_token_ms", float64(st.TTFTms), ms(c.First.Sub(c.Arrival)), hundredth)
		near("queue_time_ms", float64(st.QueueMs), ms(max(c.Scheduled.Sub(c.Arrival), 0)), hundredth)
		near("generation_time_ms", float64(st.DecodeMs), gen, hundredth)
		near("tokens_per_second", float64(st.DecodeTPS), float64(c.Completion-1)/(gen/1000), 0.01)
	case "ollama":
		if float64(st.TTFTms) != ms(c.First.Sub(c.Admitted)) || float64(st.DecodeMs) != gen || st.LoadMs != 0 {
			t.Errorf("ollama %+v, want ttft %v decode %v exactly", *st, ms(c.First.Sub(c.Admitted)), gen)
		}
	}
	// outside: what the sim's own instants say happened outside its reported TTFT.
	start := s.Start
	var serverStart time.Time
	if source == "vllm" {
		serverStart = c.Arrival
	} else {
		serverStart = c.Admitted
	}
	want := ms(serverStart.Sub(start)) + ms(start.Add(s.FirstToken).Sub(c.First))
	got, ok := s.OutsideMs()
	if !ok {
		t.Fatal("no outside figure")
	}
	near("outside", got, want, 1)
	if source != "vllm" && got < ms(headers) {
		t.Errorf("outside %.3f ms, less than the sim's %v before admission", got, headers)
	}
}

// With one batch slot, the second of two concurrent requests queues behind the first: vLLM's
// queue_time_ms says how long, and its TTFT includes it.
func TestServerQueueFromSim(t *testing.T) {
	t.Parallel()
	p := sim.Profile{Name: "q", Model: "m", TTFT: 30 * time.Millisecond, TokensPerSecond: 100, MaxRunning: 1,
		Seed: 1, VLLMMetrics: true}
	srv, err := sim.Start(sim.Options{TrackSends: true}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ep := config.Endpoint{Name: "q", BaseURL: srv.BaseURL("q"), Model: "m", MaxTokens: 10,
		Timeout: 10 * time.Second, Stall: 5 * time.Second}
	c := NewClient(ep)
	c.MarkVLLM()
	t.Cleanup(c.CloseIdleConnections)
	req := workload.Request{Messages: []workload.Message{{Role: "user", Content: "hi"}}, MaxTokens: 10}
	out := make(chan sample.Sample, 2)
	for range 2 {
		go func() { out <- c.SendLive(t.Context(), req, Live{}) }()
	}
	queued := 0
	for range 2 {
		s := <-out
		outcome(t, s, sample.OutcomeOK, "")
		clock, ok := srv.Clock(s.ResponseID)
		if !ok || s.Server == nil {
			t.Fatalf("clock %v, server timing %v", ok, s.Server)
		}
		checkSimTiming(t, &s, clock, "vllm", 0)
		if s.Server.QueueMs > 60 { // behind ~30 ms of TTFT and 90 ms of decode
			queued++
		}
	}
	if queued != 1 {
		t.Errorf("%d requests queued, want the second one", queued)
	}
}

// What is known of a server belongs to the Runner that learnt it: of runs against the same vLLM
// base URL in one process, only the one whose endpoint was marked (or came known from
// discovery) asks for the metrics, and only its requests carry vLLM's figures.
func TestMarkVLLMStaysWithItsRunner(t *testing.T) {
	t.Parallel()
	p := sim.Profile{Name: "v", Model: "m", TTFT: 5 * time.Millisecond, TokensPerSecond: 500, Seed: 1, VLLMMetrics: true}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ep := config.Endpoint{Name: "v", BaseURL: srv.BaseURL("v"), Model: "m", MaxTokens: 5, Concurrency: 1,
		Timeout: 10 * time.Second, Stall: 5 * time.Second}
	const requests = 3
	for _, tc := range []struct {
		known, mark bool
		asked       int64 // in total, from the first run on
		source      string
	}{{false, false, 0, ""}, {false, true, requests, "vllm"}, {false, false, requests, ""}, {true, false, 2 * requests, "vllm"}} {
		ep := ep
		ep.KnownVLLM = tc.known // discovery read owned_by: vllm
		r := NewRunner([]config.Endpoint{ep}, Options{Requests: requests})
		if tc.mark {
			r.MarkVLLM(0)
			r.MarkVLLM(7) // out of range: ignored
		}
		for _, d := range collect(t, r) {
			got := ""
			if d.Sample.Server != nil {
				got = d.Sample.Server.Source
			}
			if got != tc.source {
				t.Errorf("server timing source %q, want %q", got, tc.source)
			}
		}
		if got := srv.IncludeMetricsSeen("v"); got != tc.asked {
			t.Errorf("include_metrics asked %d times, want %d", got, tc.asked)
		}
	}
}
