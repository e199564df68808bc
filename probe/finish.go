package probe

import (
	"context"
	"errors"
	"time"

	"tokscope/sample"
)

// The end of a run (docs/cli.md, "End of a run and dead connections"). When --duration is over,
// Stop is called, or every endpoint has finished its Options.Requests, no new request starts;
// the requests in flight have a grace period to finish and count as usual; what is still
// running after it is cut: reported with Sample.Cut, which is not an error (a TTFT that had
// arrived still counts in the TTFT figures, nothing else of the request does). A sweep cuts
// the requests of each step the same way, a grace after the step's end (CutBefore).

// errCut is the cause of a request context cancelled by the end of the run.
var errCut = errors.New("cut by the end of the run")

// cutMessage is the ErrorMessage of a cut request.
const cutMessage = "cut: still in flight when the run ended (not an error)"

// Stop ends the run as --duration does, with grace as the requests' grace period (0: cut them
// at once, as Ctrl-C in headless mode does). Called while the run is already finishing, it
// cuts what is left at once. It never blocks; only the first call before the end counts.
func (r *Runner) Stop(grace time.Duration) {
	select {
	case r.stopc <- max(grace, 0):
	default:
	}
}

// End says how the run ended; valid once Events is closed.
func (r *Runner) End() sample.RunEnd {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended
}

// finish waits for the requests in flight (and every loop) to end, at most grace (or until
// Stop or ctx), then cuts what is left.
func (r *Runner) finish(ctx context.Context, grace time.Duration, cutAll context.CancelCauseFunc) {
	start := time.Now()
	idle := make(chan struct{})
	go func() {
		r.wg.Wait()
		close(idle)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	cut := false
	select {
	case <-idle:
	case <-timer.C:
		cut = true
	case <-r.stopc:
		cut = true
	case <-ctx.Done():
	}
	if cut {
		cutAll(errCut)
	}
	<-idle
	r.mu.Lock()
	r.ended = sample.RunEnd{Finished: true, Grace: grace, Waited: time.Since(start), Cut: cut}
	r.mu.Unlock()
}

// CutBefore cuts the background requests still in flight that started before t, as the
// grace of a sweep step that ended at t runs out (sweep.Sweep.Run). It returns how many.
func (r *Runner) CutBefore(t time.Time) int {
	n := 0
	for _, l := range r.lanes {
		l.mu.Lock()
		for _, f := range l.flights {
			if f.at.Before(t) {
				f.cancel(errCut)
				n++
			}
		}
		l.mu.Unlock()
	}
	return n
}

// flight is a background request in flight: when it started, and how to cut it.
type flight struct {
	at     time.Time
	cancel context.CancelCauseFunc
}

// markCut marks a request that ended because the end of the run cut it.
func markCut(ctx context.Context, s *sample.Sample) {
	if s.ErrorKind == sample.ErrCanceled && errors.Is(context.Cause(ctx), errCut) {
		s.Cut = true
		s.ErrorMessage = cutMessage
	}
}

// abandoned reports a request cancelled because the caller abandoned the run (Run's ctx): it
// is not reported.
func abandoned(ctx context.Context, s *sample.Sample) bool {
	return !s.Cut && s.ErrorKind == sample.ErrCanceled && ctx.Err() != nil
}
