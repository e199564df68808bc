package calibrate

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"tokscope/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// On loopback the probe sees each chunk well under a few ms after the simulator flushed it
// (docs/metrics.md measured 60–150 µs p50); the bounds are loose for a loaded 2-core machine under
// -race but fail if chunks are paired with the wrong send times (off by one chunk = ±5 ms). The
// error is below 0 when the simulator stamps its send late (after its write returned, it may
// wait for a CPU): -1.7 ms beside two CPU hogs, so the lower bound is -4 ms, short of -5.
func TestRunMeasuresSmallError(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	results, err := RunAPI(ctx, []Level{{1, 4}, {4, 2}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for _, r := range results {
		if r.Requests < r.Concurrency {
			t.Errorf("c=%d: only %d requests matched", r.Concurrency, r.Requests)
		}
		if r.TTFTErrP50 < -4 || r.TTFTErrP50 > 4 || r.ChunkErrP50 < -4 || r.ChunkErrP50 > 4 {
			t.Errorf("c=%d: error p50 TTFT %.3f ms, chunk %.3f ms: outside [-4, 4] ms", r.Concurrency, r.TTFTErrP50, r.ChunkErrP50)
		}
		if r.DecodeErrPct > 10 {
			t.Errorf("c=%d: decode tok/s error %.2f %%", r.Concurrency, r.DecodeErrPct)
		}
	}
	var out bytes.Buffer
	if err := WriteTable(&out, results); err != nil || !strings.Contains(out.String(), "TTFT err p99 ms") || strings.Count(out.String(), "\n") != 3 {
		t.Errorf("table: %v\n%s", err, out.String())
	}
}

// Compare must see lateness: shift every measured instant by 7 ms and the error follows.
func TestCompareSeesShift(t *testing.T) {
	srv, err := sim.Start(sim.Options{TrackSends: true}, Profile)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	samples, err := measure(ctx, srv, Level{Concurrency: 1, Requests: 3}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.Tokens != Profile.MaxTokens {
			t.Fatalf("a calibration request streamed %d tokens, the profile's schedule has %d", s.Tokens, Profile.MaxTokens)
		}
	}
	for i := range samples {
		samples[i].Start = samples[i].Start.Add(7 * time.Millisecond)
	}
	shifted, err := Compare(srv, 1, samples)
	if err != nil {
		t.Fatal(err)
	}
	if shifted.TTFTErrP50 < 6 || shifted.ChunkErrP50 < 6 {
		t.Errorf("a 7 ms shift shows as TTFT %.3f ms, chunk %.3f ms", shifted.TTFTErrP50, shifted.ChunkErrP50)
	}
}

// `tokscope --calibrate` announces Estimate(DefaultLevels); a run must take about that long.
// It cannot be faster than the simulator's schedule; the upper bound is loose for a loaded
// 2-core machine, but fails when requests stream more tokens than the schedule (the old
// 256-token requests took 3.6 times the estimate).
func TestRunTakesAboutItsEstimate(t *testing.T) {
	levels := []Level{{2, 3}, {4, 2}}
	want := Estimate(levels)
	start := time.Now()
	if _, err := RunAPI(context.Background(), levels, ""); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if took < want || took > 2*want+time.Second {
		t.Errorf("RunAPI took %v, Estimate says %v", took.Round(time.Millisecond), want)
	}
	if d := Estimate(DefaultLevels); d < 10*time.Second || d > 14*time.Second {
		t.Errorf("Estimate(DefaultLevels) = %v: update docs/performance.md (calibrate)", d)
	}
}

// Every API the simulator serves calibrates the same way: the probe's chunks pair with the
// simulator's token frames, with the same small error.
func TestRunAPIs(t *testing.T) {
	for _, api := range sim.APIs[1:] {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		results, err := RunAPI(ctx, []Level{{2, 2}}, api)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		r := results[0]
		if r.Requests < 4 || r.TTFTErrP50 < -1 || r.TTFTErrP50 > 4 || r.ChunkErrP50 < -1 || r.ChunkErrP50 > 4 || r.DecodeErrPct > 10 {
			t.Errorf("%s: %+v", api, r)
		}
	}
}
