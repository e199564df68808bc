//go:build unix

package probe

import (
	"context"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"tokscope/sample"

	"tokscope/config"
	"tokscope/sim"
)

// BenchmarkCeiling measures one machine's ceiling: how much TTFT error the client adds as
// the streams of one process grow, 64 to 4096, against the in-process simulator on the same
// cores. Every stream decodes 20 chunks/s with a fixed TTFT and fixed length, and the
// simulator sends on a 50 ms step clock, as a batching server does (sim.Profile.Step): the
// chunks of all streams arrive together every 50 ms, the worst case for a client that stamps
// a chunk when its goroutine gets to run. Two starts:
//
//   - ramp: tokscope's own, the streams' first requests spread over at most 250 ms
//     (lane.stagger), so their requests end, and the next ones are sent, in groups;
//
//   - lockstep: every stream's first request at one instant, so that all of them end on
//     the same step and all the next requests are sent at once: the worst case of the
//     request side, which tokscope does not make itself (a batching server with equal
//     output lengths can).
//
//   - ttft_err: tokscope's TTFT minus the simulator's own (its first token's flush minus
//     the request's arrival in its socket, by the kernel's clock): what the client adds on
//     both sides, request write and response read;
//
//   - read_err: tokscope's first-token instant minus the simulator's flush of that chunk:
//     the read side alone;
//
//   - send: the request side, the rest of ttft_err: t0 to the request's arrival in the
//     simulator's socket (building and writing the request, loopback);
//
//   - server_wait: the simulator's own wait from the request in its socket to its handler
//     starting (a CPU, its HTTP server), counted in neither TTFT: the server's, not the
//     client's; the simulator schedules its TTFT from its handler's start;
//
//   - new_conns: measured requests that opened a connection (their TTFT includes it);
//
//   - kernel_clock: the share of measured requests the kernel's receive time stamped
//     (Sample.Clock);
//
//   - samples: requests measured (fewer streams run more requests each, so that every p99
//     rests on at least ~2000 of them).
//
// Each size and start runs with the kernel clock (kstamp.go; the user clock where the kernel
// stamps nothing) and with the user clock alone.
//
// Run it alone (it takes the machine): go test ./probe -run '^$' -bench Ceiling -benchtime 1x;
// one case: -bench 'Ceiling/^1024$/kernel/ramp'.
func BenchmarkCeiling(b *testing.B) {
	raiseFileLimit(b, 2*4096+512) // a client and a server socket per stream
	for _, streams := range []int{64, 256, 1024, 4096} {
		for _, clock := range []string{sample.ClockKernel, sample.ClockUser} {
			for _, start := range []string{"ramp", "lockstep"} {
				b.Run(strconv.Itoa(streams)+"/"+clock+"/"+start, func(b *testing.B) {
					ceiling(b, streams, start == "lockstep", clock == sample.ClockKernel)
				})
			}
		}
	}
}

func ceiling(b *testing.B, streams int, lockstep, kernelClock bool) {
	const tokens = 10 // 50 ms TTFT + 9 gaps of 50 ms: half a second a request (a step more to join the clock)
	perStream := min(max((3072+streams-1)/streams, 2), 32)
	srv, err := sim.Start(sim.Options{TrackSends: true}, sim.Profile{
		Name: "ceiling", Model: "m", TokensPerSecond: 20, TokensPerChunk: 1,
		TTFT: 50 * time.Millisecond, MaxTokens: tokens, Seed: 1, Step: 50 * time.Millisecond,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ep := config.Endpoint{Name: "ceiling", BaseURL: srv.BaseURL("ceiling"), Model: "m", Prompt: "hi",
		MaxTokens: tokens, Concurrency: streams, Timeout: 2 * time.Minute, Stall: time.Minute}

	var ttftErrs, readErrs, sends, waits []time.Duration
	newConns, kernel, measured := 0, 0, 0

	for b.Loop() {
		r := NewRunner([]config.Endpoint{ep}, Options{Warmup: 1, Requests: perStream * streams, lockstep: lockstep,
			setup: clientSetup{userClock: !kernelClock}})
		go func() { _ = r.Run(context.Background()) }()
		for s := range counted(r) {
			if s.Outcome != sample.OutcomeOK {
				b.Fatalf("%s %s %s", s.Outcome, s.ErrorKind, s.ErrorMessage)
			}
			if !s.Reused {
				newConns++
			}
			measured++
			if s.Clock == sample.ClockKernel {
				kernel++
			}
			received, ok := srv.Received(s.ResponseID)
			if !ok {
				continue
			}
			if arrival, ok := srv.Arrival(s.ResponseID); ok {
				waits = append(waits, arrival.Sub(received))
			}
			sends = append(sends, received.Sub(s.Start))
			for _, f := range srv.Sends(s.ResponseID) {
				if f.Kind == sim.FrameContent || f.Kind == sim.FrameReasoning {
					readErrs = append(readErrs, s.Start.Add(s.FirstToken).Sub(f.At))
					ttftErrs = append(ttftErrs, s.FirstToken-f.At.Sub(received))
					break
				}
			}
		}
	}
	if len(ttftErrs) < streams {
		b.Fatalf("%d TTFTs matched to a send time, want at least %d", len(ttftErrs), streams)
	}
	for _, d := range [][]time.Duration{ttftErrs, readErrs, sends, waits} {
		slices.Sort(d)
	}
	q := func(errs []time.Duration, p float64) float64 {
		return float64(errs[min(len(errs)-1, int(p*float64(len(errs))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(sends, 0.99), "send_p99_ms")
	b.ReportMetric(q(waits, 0.99), "server_wait_p99_ms")
	b.ReportMetric(q(ttftErrs, 0.50), "ttft_err_p50_ms")
	b.ReportMetric(q(ttftErrs, 0.99), "ttft_err_p99_ms")
	b.ReportMetric(q(readErrs, 0.50), "read_err_p50_ms")
	b.ReportMetric(q(readErrs, 0.99), "read_err_p99_ms")
	b.ReportMetric(float64(len(ttftErrs))/float64(b.N), "samples")
	b.ReportMetric(float64(newConns)/float64(b.N), "new_conns")
	b.ReportMetric(float64(kernel)/float64(measured), "kernel_clock")
}

// raiseFileLimit lifts the soft limit on open files to at least n (up to the hard limit):
// 4096 streams hold 8192 sockets in this one process.
func raiseFileLimit(b *testing.B, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		b.Fatalf("open-file hard limit %d is below the %d that 4096 streams need (ulimit -Hn)", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
}
