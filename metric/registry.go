package metric

import (
	"time"

	"tokscope/sample"
)

// The IDs of All, in output order (the table's rows, the JSON keys within each Group).
const (
	TTFB ID = iota
	TTFT
	TTFA
	DecodeTPS
	E2ETPS
	TPOT
	ITL
	MaxGap
	TokensPerChunk
	PromptTokens
	CachedTokens
	PrefillTPS
	E2E
	OutputLen
	TTFEvent
	ReasoningTPS
	AnswerTPS
	DNS
	Connect
	TLS
	WaitHeaders
	HeadersToFirstToken
	ServerTTFT
	ServerQueue
	ServerDecodeTPS
	Outside
	DraftAcceptance
	NumIDs // the number of entries
)

// All is every per-request metric (docs/outputs.md's definitions), indexed by ID. An entry's
// outputs are its fields: JSON, Table, Compare, Prom, Chart; the record keeps every Sample
// field a reader uses, so every metric survives a replay. TestEveryMetricEverywhere checks
// that each output carries what its entry says.
var All = [NumIDs]Metric{
	TTFB: {Key: "ttfb_ms", Label: "TTFB ms", Unit: "ms", Kind: Duration, Better: Lower,
		Read:  dur(func(s *sample.Sample, _ Context) (time.Duration, bool) { return s.TTFB() }),
		Table: true,
		Prom: &Prom{"tokscope_time_to_first_byte_seconds",
			"Time from sending the request to the first response byte (ok requests).", TTFBBuckets}},
	TTFT: {Key: "ttft_ms", Label: "TTFT ms", Unit: "ms", Kind: Duration, Better: Lower, ReadOnCut: true,
		Read:  dur(func(s *sample.Sample, c Context) (time.Duration, bool) { return c.ServingTTFT(s) }),
		Table: true, Chart: &Chart{"ttft", "TTFT distribution", "TTFT (ms)", "fraction of ok requests", okNote, false},
		Compare: []Column{{"ttft p50", P50, 2}, {"ttft p90", P90, 10}, {"ttft p99", P99, 4}},
		Prom: &Prom{"tokscope_time_to_first_token_seconds",
			"Time from sending the request to the first chunk with content or reasoning (ok requests).", TTFTBuckets}},
	TTFA: {Key: "ttfa_ms", Label: "TTFA ms", Unit: "ms", Kind: Duration, Better: Lower,
		Read:  dur(func(s *sample.Sample, _ Context) (time.Duration, bool) { return s.TTFA() }),
		Table: true, Compare: []Column{{"ttfa p50", P50, 9}}},
	DecodeTPS: {Key: "decode_tps", Label: "decode tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, FromOutputTokens: true,
		Read: func(s *sample.Sample, c Context, add Adder) {
			if r, ok := c.DecodeRate(s); ok {
				add.Add(r)
			}
		},
		Chart: &Chart{"decode", "Decode speed per request", "decode tok/s (per request)", "fraction of ok requests",
			"Cumulative distribution of each ok request's (N − 1) / (last token − first token); dots mark the summary's p50, p90 and p99.", false},
		Table: true, Compare: []Column{{"dec p50", P50, 3}, {"dec p10", P10, 5}}},
	E2ETPS: {Key: "e2e_tps", Label: "e2e tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, FromOutputTokens: true,
		Read:  value(func(s *sample.Sample) (float64, bool) { return s.E2ERate() }),
		Table: true, Compare: []Column{{"e2e p50", P50, 6}}},
	TPOT: {Key: "tpot_ms", Label: "TPOT ms", Unit: "ms", Kind: Duration, Better: Lower, FromOutputTokens: true,
		Read:  dur(func(s *sample.Sample, _ Context) (time.Duration, bool) { return s.TPOT() }),
		Table: true, Compare: []Column{{"tpot p50", P50, 16}},
		Chart: &Chart{"tpot", "Time per output token", "TPOT (ms per token, per request)", "fraction of ok requests",
			"Cumulative distribution of each ok request's (last token − first token) / (N − 1); dots mark the summary's p50, p90 and p99.", false},
		Prom: &Prom{"tokscope_time_per_output_token_seconds",
			"(last_token - first_token) / (output tokens - 1) per request (ok requests with at least 2 tokens).", TPOTBuckets}},
	ITL: {Key: "itl_ms", Label: "ITL ms", Unit: "ms", Kind: Duration, Better: Lower,
		Read: func(s *sample.Sample, _ Context, add Adder) {
			for gap := range s.Gaps() {
				add.Add(ms(gap))
			}
		},
		Table: true, Compare: []Column{{"itl p99", P99, 7}}, ManyPerSample: true,
		Chart: &Chart{"itl", "Inter-token latency distribution", "gap between token-bearing chunks (ms, log scale)", "fraction of gaps",
			"Every gap between consecutive chunks carrying text, over ok requests; dots mark the summary's p50, p90 and p99.", true},
		Prom: &Prom{"tokscope_inter_chunk_latency_seconds",
			"Every gap between consecutive token-bearing chunks (ok requests). Overstates per-token latency when chunks carry several tokens.", ITLBuckets}},
	MaxGap: {Key: "max_gap_ms", Label: "max gap ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read:  dur(func(s *sample.Sample, _ Context) (time.Duration, bool) { return s.MaxGap() }),
		Table: true, Compare: []Column{{"max gap", Max, 8}}},
	TokensPerChunk: {Key: "tokens_per_chunk", Label: "tokens/chunk", Kind: Ratio, JSON: Mean, FromOutputTokens: true,
		Read:  value(func(s *sample.Sample) (float64, bool) { return s.TokensPerChunk() }),
		Table: true, Compare: []Column{{"tok/chk", P50, 11}}},
	PromptTokens: {Key: "prompt_tokens", Label: "prompt tokens", Unit: "tokens", Kind: Count, Group: Workload,
		Read: value(func(s *sample.Sample) (float64, bool) { // from usage only
			return float64(s.PromptTokens), s.PromptTokens > 0
		}),
		Table: true, Compare: []Column{{"prompt", P50, 14}}},
	CachedTokens: {Key: "cached_tokens", Label: "cached tokens", Unit: "tokens", Kind: Count, Group: Workload,
		Read: value(func(s *sample.Sample) (float64, bool) { // reported by the server, 0 included; -1: not
			return float64(s.CachedTokens), s.CachedTokens >= 0
		}),
		Table: true, Compare: []Column{{"cached", P50, 15}}},
	PrefillTPS: {Key: "prefill_tps", Label: "prefill tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, Group: Workload,
		Read:  value(func(s *sample.Sample) (float64, bool) { return s.PrefillRate() }),
		Table: true, Compare: []Column{{"prefill", P50, 13}}},
	E2E: {Key: "e2e_ms", Label: "e2e ms", Unit: "ms", Kind: Duration, Better: Lower, Group: Workload,
		Read:  dur(func(s *sample.Sample, c Context) (time.Duration, bool) { return c.E2E(s) }),
		Table: true,
		Prom: &Prom{"tokscope_e2e_request_latency_seconds",
			"Time from sending the request to its last chunk (ok requests): e2e_ms of the summary.", E2EBuckets}},
	OutputLen: {Key: "output_len", Label: "output len", Unit: "tokens", Kind: Count, Group: Workload,
		Read:  value(func(s *sample.Sample) (float64, bool) { return float64(max(s.Tokens, 0)), true }),
		Table: true, Compare: []Column{{"out len", P50, 17}},
		Chart: &Chart{"output-len", "Output tokens per request", "output tokens (per request)", "fraction of ok requests", okNote, false},
		Prom: &Prom{"tokscope_request_output_tokens",
			"Output tokens of each ok request (as counted: see tokscope_token_source_requests_total).", OutputLenBuckets}},

	// Figures of the views only (the detail view's phases and connection setup).
	TTFEvent: {Key: "ttfe_ms", Label: "first event ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: dur(func(s *sample.Sample, _ Context) (time.Duration, bool) { return s.TTFEvent() })},
	ReasoningTPS: {Key: "reasoning_tps", Label: "reasoning tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, FromOutputTokens: true, JSON: None,
		Read: value(func(s *sample.Sample) (float64, bool) {
			p, ok := s.PhaseSplit()
			return p.ReasoningRate, ok && p.ReasoningOK
		})},
	AnswerTPS: {Key: "answer_tps", Label: "answer tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, FromOutputTokens: true, JSON: None,
		Read: value(func(s *sample.Sample) (float64, bool) {
			p, ok := s.PhaseSplit()
			return p.AnswerRate, ok && p.AnswerOK
		})},
	DNS: {Key: "dns_ms", Label: "DNS ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: instant(func(s *sample.Sample) time.Duration { return s.DNS })},
	Connect: {Key: "connect_ms", Label: "connect ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: instant(func(s *sample.Sample) time.Duration { return s.Connect })},
	TLS: {Key: "tls_ms", Label: "TLS ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: instant(func(s *sample.Sample) time.Duration { return s.TLS })},
	WaitHeaders: {Key: "wait_headers_ms", Label: "wait headers ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: dur(func(s *sample.Sample, _ Context) (time.Duration, bool) {
			return s.Headers - s.Wrote, s.Wrote >= 0 && s.Headers >= 0
		})},
	HeadersToFirstToken: {Key: "headers_to_first_token_ms", Label: "headers → token ms", Unit: "ms", Kind: Duration, Better: Lower, JSON: None,
		Read: dur(func(s *sample.Sample, _ Context) (time.Duration, bool) {
			return s.FirstToken - s.Headers, s.Headers >= 0 && s.FirstToken >= 0
		})},

	// The server's own clock (sample.ServerTiming), in the JSON's "server_timing" block. The
	// report draws them in its "client and server" section beside the client's, not as CDFs
	// of their own (a server that says nothing would leave empty charts).
	ServerTTFT: {Key: "server_ttft_ms", KeyInGroup: "ttft_ms", Label: "srv TTFT ms", Unit: "ms", Kind: Duration, Better: Lower, Group: Server,
		Read: value(func(s *sample.Sample) (float64, bool) {
			if t := s.Server; t != nil && t.TTFTms >= 0 && !t.ModelLoad() {
				return float64(t.TTFTms), true
			}
			return 0, false
		}),
		Table: true, Compare: []Column{{"srv ttft", P50, 18}},
		Prom: &Prom{"tokscope_server_time_to_first_token_seconds",
			"The server's own time to first token, as its response said (llama.cpp prompt_ms, vLLM time_to_first_token_ms, Ollama load+prompt_eval).", TTFTBuckets}},
	ServerQueue: {Key: "server_queue_ms", KeyInGroup: "queue_ms", Label: "srv queue ms", Unit: "ms", Kind: Duration, Better: Lower, Group: Server,
		Read: value(func(s *sample.Sample) (float64, bool) {
			if t := s.Server; t != nil && t.QueueMs >= 0 {
				return float64(t.QueueMs), true
			}
			return 0, false
		}),
		Table: true,
		Prom: &Prom{"tokscope_server_queue_seconds",
			"The server's own queue time per request (vLLM queue_time_ms).", TTFTBuckets}},
	ServerDecodeTPS: {Key: "server_decode_tps", KeyInGroup: "decode_tps", Label: "srv decode tok/s", Unit: "tok/s", Kind: Rate, Better: Higher, Group: Server,
		Read:  value(func(s *sample.Sample) (float64, bool) { return s.Server.DecodeRate() }),
		Table: true, Compare: []Column{{"srv dec", P50, 20}},
		Prom: &Prom{"tokscope_server_decode_tokens_per_second",
			"The server's own decode speed per request (llama.cpp (predicted_n-1)/predicted_ms, vLLM tokens_per_second, Ollama (eval_count-1)/eval_duration).", DecodeTPSBuckets}},
	Outside: {Key: "outside_ms", Label: "outside ms", Unit: "ms", Kind: Duration, Better: Lower, Group: Server,
		Read: value(func(s *sample.Sample) (float64, bool) {
			if s.Server.ModelLoad() {
				return 0, false
			}
			return s.OutsideMs()
		}),
		Table: true, Compare: []Column{{"outside", P50, 19}},
		Prom: &Prom{"tokscope_outside_server_seconds",
			"Client TTFT minus the server's own TTFT: network, HTTP, templating, waiting for a slot (llama.cpp), the client.", TTFTBuckets}},
	DraftAcceptance: {Key: "draft_acceptance", Label: "draft accept", Kind: Ratio, Better: Higher, Group: Server, JSON: Mean,
		Read:  value(func(s *sample.Sample) (float64, bool) { return s.Server.DraftAcceptance() }),
		Table: true},
}

// Bucket upper bounds of the Prometheus histograms, in seconds (tokens for OutputLen). vLLM's
// own TTFT buckets are the reference: a user who runs vLLM can put tokscope's client-side view
// and the server's view on one chart with the same bounds.
var (
	// TTFTBuckets are vLLM's vllm:time_to_first_token_seconds buckets, unchanged: 1 ms
	// (a warm local server on loopback) up to 2560 s (a long prompt queued behind a busy batch).
	TTFTBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
		1.0, 2.5, 5.0, 7.5, 10, 20, 40, 80, 160, 640, 2560}

	// TTFBBuckets equal TTFTBuckets: response headers arrive anywhere from together with the
	// first token (servers that flush late) to well before it, so the same range applies, and
	// equal bounds let TTFB and TTFT quantiles be compared without bucket artefacts.
	TTFBBuckets = TTFTBuckets

	// ITLBuckets cover gaps between token-bearing chunks. vLLM's inter-token buckets start at
	// 10 ms, but fast providers (Groq, Cerebras) and small local models stream a chunk every
	// 1–5 ms, so the low end is finer (0.5 ms … 10 ms); the top reaches past the default 30 s
	// stall limit so stalls land in a real bucket rather than +Inf.
	ITLBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025,
		0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10,
		20, 40, 80}

	// TPOTBuckets cover per-token decode time from 2000 tok/s (0.5 ms) down to 0.1 tok/s
	// (10 s, a large model on CPU). They are densest between 5 ms and 50 ms (20–200 tok/s),
	// where most GPU servers decode and where users compare providers.
	TPOTBuckets = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.0125, 0.015,
		0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.5, 5.0, 10}

	// E2EBuckets are vLLM's vllm:e2e_request_latency_seconds buckets (0.3 s … 7680 s) with
	// 50, 100 and 200 ms added below, for short max_tokens probes against fast servers.
	E2EBuckets = []float64{0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10, 15,
		20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}

	// OutputLenBuckets are output tokens per request, vLLM's request_generation_tokens bounds
	// (1, 2, 5, 10, 20, 50, … 20000) extended to 100000 for long reasoning answers.
	OutputLenBuckets = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000,
		20000, 50000, 100000}

	// DecodeTPSBuckets are a server's decode speed per request, tokens per second: a large
	// model on CPU (1 tok/s) to a small one on a fast GPU or speculative decoding (5000).
	DecodeTPSBuckets = []float64{1, 2, 5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 125, 150, 200,
		250, 300, 400, 500, 750, 1000, 2000, 5000}
)

// PromValue converts a value of the metric's display unit into its Prometheus unit.
func (m *Metric) PromValue(v float64) float64 {
	if m.Kind == Duration {
		return v / 1000
	}
	return v
}

// UsageBuckets are the OpenTelemetry GenAI semantic conventions' advised bounds for
// gen_ai.client.token.usage (powers of 4 from 1 to 4^13 tokens), so that the OTLP push
// (package otlpexport), which names this histogram so, carries the advised buckets.
var UsageBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576,
	4194304, 16777216, 67108864}
