package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"tokscope/sample"

	openai "github.com/sashabaranov/go-openai"

	"tokscope/config"
	"tokscope/sim"
	"tokscope/workload"
)

// memStream answers every request with the same SSE body from memory, so that a benchmark
// measures the reading and accounting of chunks, not a network.
type memStream struct{ body []byte }

func (m memStream) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		_ = req.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(m.body)),
		Request: req,
	}, nil
}

// benchChunks is the tokens per streamed answer: long enough that per-request costs (request
// building, the Sample) fade next to per-chunk ones.
const benchChunks = 2048

// memClient builds a client over any RoundTripper (an in-memory one here), which also serves
// the retries.
func memClient(ep config.Endpoint, tr http.RoundTripper) *Client {
	return newClientOver(ep, tr, tr, nil)
}

// ask sends prompt as one streamed request with the endpoint's max_tokens (no tag, no
// workload) through SendLive, the path every request of the Runner takes.
func ask(ctx context.Context, c *Client, prompt string, live Live) sample.Sample {
	return c.SendLive(ctx, workload.Request{
		Messages:  []workload.Message{{Role: openai.ChatMessageRoleUser, Content: prompt}},
		MaxTokens: c.ep.MaxTokens,
	}, live)
}

// vllmStream is a vLLM-shaped stream: role chunk, one-token content chunks, finish, usage, [DONE].
func vllmStream(n int) []byte {
	var b bytes.Buffer
	const head = `data: {"id":"chatcmpl-8f2a1c7e9b3d4e5f","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":`
	b.WriteString(head + `{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range n {
		fmt.Fprintf(&b, head+`{"content":" word%d"},"logprobs":null,"finish_reason":null}]}`+"\n\n", i%100)
	}
	b.WriteString(head + `{},"logprobs":null,"finish_reason":"length"}]}` + "\n\n")
	fmt.Fprintf(&b, `data: {"id":"chatcmpl-8f2a1c7e9b3d4e5f","object":"chat.completion.chunk","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":20,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", n+20, n)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// perChunk reports ns and allocations per chunk over b.N answers of chunks chunks each.
func perChunk(b *testing.B, chunks int, run func()) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		run()
	}
	el := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	total := float64(b.N * chunks)
	b.ReportMetric(float64(el.Nanoseconds())/total, "ns/chunk")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/chunk")
}

// BenchmarkChunkOverhead compares a bare go-openai RecvRaw loop with the engine's whole
// per-chunk work (read, timestamp, decode, accounting, Sample) over the same in-memory stream.
// The difference between the two ns/chunk and allocs/chunk figures is the engine's cost.
func BenchmarkChunkOverhead(b *testing.B) {
	body := vllmStream(benchChunks)
	chunks := benchChunks + 3 // role, finish, usage
	ep := config.Endpoint{Name: "bench", BaseURL: "http://mem/v1", Model: "m", Prompt: "hi", MaxTokens: benchChunks,
		Timeout: time.Minute, Stall: time.Minute}

	b.Run("bare", func(b *testing.B) {
		cfg := openai.DefaultConfig("")
		cfg.BaseURL = ep.BaseURL
		cfg.HTTPClient = &http.Client{Transport: memStream{body}}
		api := openai.NewClientWithConfig(cfg)
		req := openai.ChatCompletionRequest{Model: "m", MaxTokens: benchChunks, Stream: true,
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}
		perChunk(b, chunks, func() {
			stream, err := api.CreateChatCompletionStream(context.Background(), req)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				raw, err := stream.RecvRaw()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil || raw == nil {
					b.Fatal(err)
				}
				n++
			}
			stream.Close()
			if n != chunks {
				b.Fatalf("%d chunks", n)
			}
		})
	})

	b.Run("engine", func(b *testing.B) {
		c := memClient(ep, memStream{body})
		perChunk(b, chunks, func() {
			s := ask(context.Background(), c, "hi", Live{})
			if s.Outcome != sample.OutcomeOK || s.Tokens != benchChunks || len(s.Chunks) != chunks {
				b.Fatalf("%s %s: N %d chunks %d", s.Outcome, s.ErrorMessage, s.Tokens, len(s.Chunks))
			}
		})
	})

	// Live accounting. "engine+progress": what a run does, a Progress at the first token and
	// then every ProgressEvery, on an endpoint's first request (nothing learned: the live
	// count goes through the tokenizer). The "every chunk" variants price a Progress on every
	// chunk, the upper bound (100× ProgressEvery's rate at 1000 tok/s): "learned", the
	// endpoint's tokens per chunk is known (every request after its first); "tokenizer", it is
	// not, and each chunk's text goes through the offline tokenizer.
	live := func(c *Client, n *int) {
		s := ask(context.Background(), c, "hi", Live{Progress: func(p *sample.Progress) { *n += p.Chunks }})
		if s.Outcome != sample.OutcomeOK || s.Tokens != benchChunks {
			b.Fatalf("%s %s: N %d", s.Outcome, s.ErrorMessage, s.Tokens)
		}
	}
	WarmTokenizer()
	b.Run("engine+progress", func(b *testing.B) {
		var n int
		perChunk(b, chunks, func() { live(memClient(ep, memStream{body}), &n) })
	})
	b.Run("engine+progress/every-chunk/learned", func(b *testing.B) {
		c := memClient(ep, memStream{body})
		c.count.every = -1                         // a Progress on every chunk
		ask(context.Background(), c, "hi", Live{}) // learn the tokens per chunk
		var n int
		perChunk(b, chunks, func() { live(c, &n) })
	})
	b.Run("engine+progress/every-chunk/tokenizer", func(b *testing.B) {
		var n int
		perChunk(b, chunks, func() {
			c := memClient(ep, memStream{body})
			c.count.every = -1 // a Progress on every chunk
			live(c, &n)
		})
	})

	b.Run("engine+deltas", func(b *testing.B) {
		c := memClient(ep, memStream{body})
		var texts int
		perChunk(b, chunks, func() {
			ask(context.Background(), c, "hi", Live{Delta: func(d sample.Delta) { texts += len(d.Text) }})
		})
	})
}

// BenchmarkConcurrentStreams64 runs 64 concurrent streams through the Runner against the
// simulator, with the command line's default warm-up (one request per endpoint). Each
// iteration is a fresh Runner whose 64 streams start together, as a run does. It reports, in
// the same process and on the same clock:
//
//   - chunks/s: the aggregate the engine keeps up with ("throughput": 64 × 1000 tok/s, more
//     than two cores can read, so its TTFT figures measure the CPU, not tokscope);
//   - ttft_err: the probe's TTFT minus the server's own (its first token's flush minus the
//     request's arrival in its handler): everything the client adds, connection set-up
//     included — what a user comparing tokscope with the server's log sees. "ttft" runs 64
//     streams of 100 tok/s, a load the machine carries, "warmed" as the Runner does it (one
//     connection per stream opened after the warm-up), "cold" leaving each stream to open its
//     connection inside its first request, as before;
//   - read_err: the probe's first-token instant minus the simulator's flush of that chunk:
//     the read side alone;
//   - new_conns/run: counted requests that opened a connection.
func BenchmarkConcurrentStreams64(b *testing.B) {
	b.Run("throughput", func(b *testing.B) { concurrentStreams(b, 1000, 256, false) })
	b.Run("ttft/warmed", func(b *testing.B) { concurrentStreams(b, 100, 64, false) })
	b.Run("ttft/cold", func(b *testing.B) { concurrentStreams(b, 100, 64, true) })
}

func concurrentStreams(b *testing.B, tokensPerSecond float64, tokens int, cold bool) {
	const conc = 64
	srv, err := sim.Start(sim.Options{TrackSends: true}, sim.Profile{
		Name: "bench", Model: "m", TokensPerSecond: tokensPerSecond, TokensPerChunk: 1,
		TTFT: 20 * time.Millisecond, TTFTJitter: 10 * time.Millisecond, MaxTokens: tokens, Seed: 1,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ep := config.Endpoint{Name: "bench", BaseURL: srv.BaseURL("bench"), Model: "m", Prompt: "hi",
		MaxTokens: tokens, Concurrency: conc, Timeout: time.Minute, Stall: 30 * time.Second}

	var chunks, newConns int
	var busy time.Duration
	var ttftErrs, readErrs []time.Duration
	for b.Loop() {
		r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: 2 * conc, coldConns: cold})
		var samples []sample.Sample
		go func() { _ = r.Run(context.Background()) }()
		var first, last time.Time
		for s := range counted(r) {
			if s.Outcome != sample.OutcomeOK {
				b.Fatalf("%s %s %s", s.Outcome, s.ErrorKind, s.ErrorMessage)
			}
			samples = append(samples, *s)
			if first.IsZero() || s.Start.Before(first) {
				first = s.Start
			}
			if end := s.Start.Add(s.End); end.After(last) {
				last = end
			}
		}
		busy += last.Sub(first)
		for _, s := range samples {
			chunks += len(s.Chunks)
			if !s.Reused {
				newConns++
			}
			arrival, ok := srv.Arrival(s.ResponseID)
			if !ok {
				continue
			}
			for _, f := range srv.Sends(s.ResponseID) {
				if f.Kind == sim.FrameContent || f.Kind == sim.FrameReasoning {
					readErrs = append(readErrs, s.Start.Add(s.FirstToken).Sub(f.At))
					ttftErrs = append(ttftErrs, s.FirstToken-f.At.Sub(arrival))
					break
				}
			}
		}
	}
	if len(ttftErrs) == 0 {
		b.Fatal("no TTFT matched to a send time")
	}
	q := func(errs []time.Duration, p float64) float64 {
		return float64(errs[min(len(errs)-1, int(p*float64(len(errs))))].Microseconds()) / 1000
	}
	slices.Sort(ttftErrs)
	slices.Sort(readErrs)
	b.ReportMetric(float64(chunks)/busy.Seconds(), "chunks/s")
	b.ReportMetric(q(ttftErrs, 0.50), "ttft_err_p50_ms")
	b.ReportMetric(q(ttftErrs, 0.99), "ttft_err_p99_ms")
	b.ReportMetric(q(readErrs, 0.50), "read_err_p50_ms")
	b.ReportMetric(q(readErrs, 0.99), "read_err_p99_ms")
	b.ReportMetric(float64(newConns)/float64(b.N), "new_conns/run")
}
