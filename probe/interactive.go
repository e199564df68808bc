package probe

import (
	"context"
	"sync"
	"time"

	"tokscope/sample"

	"tokscope/workload"
)

// Interactive requests: a prompt typed in the Stream or Race view, sent beside the background
// loops under a stream id of its own. They are not paused, not counted in Options.Requests
// and not subject to the back-off, but a 429 they get backs the endpoint off (the limit is
// the key's, whoever hit it). Their Started, Delta and Done events carry the stream id, so
// that consumers keep them out of statistics.

// Stream sends one interactive request with prompt to endpoint ep. Its Started, Delta and
// Done events carry the returned stream id (never 0); consumers keep it out of statistics.
// It returns 0 when ep is out of range or the Runner has stopped. Called before Run, the
// request starts when Run does.
func (r *Runner) Stream(ep sample.EndpointIndex, prompt string) uint64 {
	l := r.lane(ep)
	if l == nil {
		return 0
	}
	id := r.streamIDs.Add(1)
	if !r.launch(func(ctx context.Context) { l.interactive(ctx, id, prompt) }) {
		return 0
	}
	return id
}

// Race sends prompt to every endpoint at once under one stream id: all requests are prepared,
// then released at one instant. It returns 0 when there are no endpoints or the Runner has
// stopped.
func (r *Runner) Race(prompt string) uint64 {
	if len(r.lanes) == 0 {
		return 0
	}
	id := r.streamIDs.Add(1)
	ok := r.launch(func(ctx context.Context) {
		var ready, done sync.WaitGroup
		gate := make(chan struct{})
		for _, l := range r.lanes {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				select {
				case <-gate:
				case <-ctx.Done():
					return
				}
				l.interactive(ctx, id, prompt)
			}()
		}
		ready.Wait()
		close(gate)
		done.Wait()
	})
	if !ok {
		return 0
	}
	return id
}

// interactive runs one Stream/Race request on this endpoint.
func (l *lane) interactive(ctx context.Context, id uint64, prompt string) {
	r := l.r
	seq := l.seq.Add(1)
	r.out.send(ctx, &sample.Started{Endpoint: l.idx, Seq: seq, Stream: id, At: time.Now()})
	l.onStart(seq)
	var req workload.Request
	if l.work != nil {
		req = l.work.Interactive(prompt)
	}
	s := l.send(ctx, req, Live{Delta: l.deltaSink(seq, id), Progress: l.progressSink(seq, id, false)})
	s.Seq, s.Stream = seq, id
	markCut(ctx, &s)
	if abandoned(ctx, &s) {
		return
	}
	if isRateLimited(&s) {
		l.mu.Lock()
		l.health.rateLimit(&s) // the limit applies to the key, whoever hit it
		l.mu.Unlock()
		l.status.publish()
	}
	l.report(&s, id)
}
