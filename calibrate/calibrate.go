// Package calibrate measures tokscope's own timing error on this machine: it runs the
// built-in simulator with a known schedule and compares what the probe measured with the
// instants the simulator recorded when it flushed each chunk.
//
// It imports probe, config, sim and fanout (the run's loop); never stats, ui or the charm libraries.
package calibrate

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"tokscope/config"
	"tokscope/fanout"
	"tokscope/probe"
	"tokscope/sample"
	"tokscope/sim"
)

// Level is one concurrency level to measure.
type Level struct {
	Concurrency int
	Requests    int // finished requests per stream slot at this level
}

// DefaultLevels are what `tokscope calibrate` runs: light, moderate and heavy load.
var DefaultLevels = []Level{{1, 20}, {8, 6}, {32, 3}}

// Profile is the simulator schedule calibration runs against: a decode speed like a fast GPU
// server, one token per chunk so every chunk is a timing point.
var Profile = sim.Profile{Name: "calibrate", Model: "calibrate", TTFT: 50 * time.Millisecond,
	TokensPerSecond: 200, TokensPerChunk: 1, MaxTokens: 64, RoleChunk: true, Seed: 1}

// Result is the timing error at one level. Errors are measured − sent, in milliseconds: how
// late tokscope saw a chunk after the simulator had flushed it.
type Result struct {
	Concurrency              int
	Requests                 int
	TTFTErrP50, TTFTErrP99   float64 // first token
	ChunkErrP50, ChunkErrP99 float64 // every chunk
	DecodeErrPct             float64 // mean |measured − sent| / sent decode tok/s, in percent
}

// Estimate is how long RunAPI takes on levels when the simulator keeps its schedule: each
// stream slot sends one warm-up and then its requests back to back, each lasting the
// profile's TTFT and then its remaining tokens at its decode speed. A loaded machine adds a
// little; it never takes less.
func Estimate(levels []Level) time.Duration {
	perRequest := Profile.TTFT + time.Duration(float64(Profile.MaxTokens-1)/Profile.TokensPerSecond*float64(time.Second))
	var total time.Duration
	for _, lv := range levels {
		total += time.Duration(lv.Requests+1) * perRequest
	}
	return total
}

// RunAPI measures every level in turn on a fresh simulator, through one of its APIs
// (sim.APIs; "" is chat).
func RunAPI(ctx context.Context, levels []Level, api string) ([]Result, error) {
	srv, err := sim.Start(sim.Options{TrackSends: true}, Profile)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	var results []Result
	for _, lv := range levels {
		r, err := runLevel(ctx, srv, lv, api)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

func runLevel(ctx context.Context, srv *sim.Server, lv Level, api string) (Result, error) {
	samples, err := measure(ctx, srv, lv, api)
	if err != nil {
		return Result{}, err
	}
	return Compare(srv, lv.Concurrency, samples)
}

// measure runs one level and returns its counted samples.
func measure(ctx context.Context, srv *sim.Server, lv Level, api string) ([]sample.Sample, error) {
	ep := config.NewEndpoint(srv.BaseURLFor(Profile.Name, api), Profile.Model)
	ep.Name, ep.Concurrency, ep.Interval, ep.API = "calibrate", lv.Concurrency, 0, api
	// The profile's length, not the endpoint default (256): the simulator answers the
	// request's max_tokens, and 256 tokens would make every request, and the whole run,
	// 3.6 times longer than Estimate says.
	ep.MaxTokens = Profile.MaxTokens
	var samples []sample.Sample
	runner := probe.NewRunner([]config.Endpoint{ep}, probe.Options{Warmup: lv.Concurrency, Requests: lv.Requests * lv.Concurrency})
	errc := make(chan error, 1)
	go func() { errc <- runner.Run(ctx) }()
	fanout.NewLoop(runner.Events(), fanout.Config{Observers: fanout.Func(func(ev sample.Event) bool {
		if d, ok := ev.(*sample.Done); ok && d.Sample.Counted() {
			samples = append(samples, d.Sample)
		}
		return false
	})}).Run()
	if err := <-errc; err != nil {
		return nil, err
	}
	return samples, ctx.Err()
}

// Compare matches each sample's chunks, in order, to the simulator's flushed frames. Where an
// API writes several events in one frame (Responses, Anthropic), the token chunks are paired
// with the token frames instead.
func Compare(srv *sim.Server, concurrency int, samples []sample.Sample) (Result, error) {
	var ttft, chunk []time.Duration
	var decodeErr []float64
	for i := range samples {
		s := &samples[i]
		sends, chunks := srv.Sends(s.ResponseID), s.Chunks
		if len(sends) != len(chunks) {
			sends, chunks = tokenSends(sends), tokenChunks(chunks)
		}
		if len(sends) != len(chunks) {
			continue // a frame the probe did not see as a chunk: cannot pair by index
		}
		firstTok, lastTok := -1, -1
		for j, f := range sends {
			chunk = append(chunk, s.Start.Add(chunks[j].At).Sub(f.At))
			if f.Kind == sim.FrameContent || f.Kind == sim.FrameReasoning {
				if firstTok < 0 {
					firstTok = j
				}
				lastTok = j
			}
		}
		if firstTok < 0 {
			continue
		}
		ttft = append(ttft, s.Start.Add(s.FirstToken).Sub(sends[firstTok].At))
		measured, ok := s.DecodeRate()
		sentSpan := sends[lastTok].At.Sub(sends[firstTok].At)
		if ok && sentSpan > 0 && s.Tokens > 1 {
			sent := float64(s.Tokens-1) / sentSpan.Seconds()
			decodeErr = append(decodeErr, 100*abs(measured-sent)/sent)
		}
	}
	if len(ttft) == 0 {
		return Result{}, fmt.Errorf("concurrency %d: no request could be matched to the simulator's send times", concurrency)
	}
	r := Result{Concurrency: concurrency, Requests: len(ttft)}
	r.TTFTErrP50, r.TTFTErrP99 = quantileMs(ttft, 0.50), quantileMs(ttft, 0.99)
	r.ChunkErrP50, r.ChunkErrP99 = quantileMs(chunk, 0.50), quantileMs(chunk, 0.99)
	for _, e := range decodeErr {
		r.DecodeErrPct += e / float64(len(decodeErr))
	}
	return r, nil
}

func tokenSends(sends []sim.Send) []sim.Send {
	var out []sim.Send
	for _, f := range sends {
		if f.Kind == sim.FrameContent || f.Kind == sim.FrameReasoning {
			out = append(out, f)
		}
	}
	return out
}

func tokenChunks(chunks []sample.Chunk) []sample.Chunk {
	var out []sample.Chunk
	for _, c := range chunks {
		if c.TokenBearing() {
			out = append(out, c)
		}
	}
	return out
}

// quantileMs is the nearest-rank quantile in milliseconds.
func quantileMs(d []time.Duration, q float64) float64 {
	slices.Sort(d)
	i := max(0, min(len(d)-1, int(q*float64(len(d))+0.999999)-1))
	return float64(d[i].Microseconds()) / 1000
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// WriteTable prints results for people, one row per level.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "concurrency\trequests\tTTFT err p50 ms\tTTFT err p99 ms\tchunk err p50 ms\tchunk err p99 ms\tdecode tok/s err %\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.2f\t\n", r.Concurrency, r.Requests,
			r.TTFTErrP50, r.TTFTErrP99, r.ChunkErrP50, r.ChunkErrP99, r.DecodeErrPct)
	}
	return tw.Flush()
}
