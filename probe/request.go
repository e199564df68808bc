package probe

import (
	"context"
	"time"

	"tokscope/sample"

	"tokscope/workload"
)

// One background request of a lane, from its Started to its Done: the flight that CutBefore
// may cut, the health it leaves, the warm-up and quota it counts in, and the events that
// report it (and the OnStart hooks). Runs on the loop's goroutine.

// once sends one background request; ok=false when its sample was not reported (the run was
// abandoned). arrival, when not zero, is the open-loop arrival it serves: the time from it to
// t0 is the client queue.
func (l *lane) once(warm bool, arrival time.Time, req workload.Request, reply func(sample.Delta)) (sample.Sample, bool) {
	r := l.r
	seq := l.seq.Add(1)
	ctx, cancel := context.WithCancelCause(r.reqCtx)
	defer cancel(nil)
	at := l.begin(seq, cancel)
	r.out.send(r.ctx, &sample.Started{Endpoint: l.idx, Seq: seq, At: at, Session: req.Session})
	live := Live{Progress: l.progressSink(seq, 0, warm)}
	if r.opts.Deltas {
		live.Delta = l.deltaSink(seq, 0)
	}
	live.Delta = tee(reply, live.Delta)
	l.onStart(seq)
	s := l.send(ctx, req, live)
	s.Seq, s.Warmup = seq, warm
	s.Conversation, s.Turn, s.Session = req.Conversation, req.Turn, req.Session
	markCut(ctx, &s)
	if !arrival.IsZero() {
		s.Queue = s.Start.Sub(arrival)
	}
	l.end(seq, &s)

	if warm {
		defer func() {
			if l.warm.end() {
				l.warmConns()
				l.warm.open()
			}
		}()
	}
	if abandoned(ctx, &s) {
		return s, false // cancelled with the run: not a request the endpoint failed
	}
	last := !warm && !s.Cut && l.quota.finish()
	l.report(&s, 0)
	if last { // every counted request has started (tickets), and this was the last to finish
		l.finish()
	}
	l.stopPermanent()
	return s, true
}

// finish ends the lane once its last counted request has finished: no new request, a
// StateStopped Status, and the Runner told once.
func (l *lane) finish() {
	l.mu.Lock()
	first := !l.finished
	l.finished, l.live = true, false
	cancel := l.cancel
	l.mu.Unlock()
	cancel()
	l.status.publish()
	if first {
		l.r.endpointFinished()
	}
}

// warmConns opens one connection per stream before the counted requests start together, so
// that none of them opens its connection inside its TTFT (a request that still does shows its
// connect phase).
func (l *lane) warmConns() {
	if l.r.opts.coldConns {
		return
	}
	l.mu.Lock()
	n := l.target
	l.mu.Unlock()
	l.client.WarmConns(l.ctx, n)
}

func (l *lane) nextRequest() workload.Request {
	if l.work == nil {
		return workload.Request{}
	}
	return l.work.Next()
}

// send measures one request, or fails it at once when the workload could not be built.
func (l *lane) send(ctx context.Context, req workload.Request, live Live) sample.Sample {
	if l.workErr == nil {
		return l.client.SendLive(ctx, req, live)
	}
	s := newSample(l.ep)
	s.Start, s.End = time.Now(), 0
	s.Outcome, s.ErrorKind = sample.OutcomeError, ErrRequest
	s.ErrorMessage = readable(l.workErr.Error())
	return s
}

// onStart calls the Options.OnStart hooks for request seq.
func (l *lane) onStart(seq uint64) {
	for _, f := range l.r.opts.OnStart {
		f(l.ep.Name, seq)
	}
}

func (l *lane) report(s *sample.Sample, stream uint64) {
	s.KeepMicroseconds() // what the record keeps: a replay then aggregates the same values
	l.r.out.send(l.r.ctx, &sample.Done{Endpoint: l.idx, Stream: stream, Sample: *s})
}

func (l *lane) deltaSink(seq, stream uint64) func(sample.Delta) {
	return func(d sample.Delta) {
		d.Endpoint, d.Seq, d.Stream = l.idx, seq, stream
		l.r.out.delta(&d)
	}
}

// progressSink reports a request's Progress on the channel (a copy: the decoder reuses p).
func (l *lane) progressSink(seq, stream uint64, warm bool) func(*sample.Progress) {
	return func(p *sample.Progress) {
		p.Endpoint, p.Seq, p.Stream, p.Warmup = l.idx, seq, stream, warm
		ev := *p
		l.r.out.progress(&ev)
	}
}

// begin accounts a background request about to be sent (cancel cuts it: CutBefore) and
// returns the instant it started.
func (l *lane) begin(seq uint64, cancel context.CancelCauseFunc) time.Time {
	at := time.Now()
	l.mu.Lock()
	if l.flights == nil {
		l.flights = map[uint64]flight{}
	}
	l.flights[seq] = flight{at: at, cancel: cancel}
	l.mu.Unlock()
	l.status.publish()
	return at
}

// end accounts a background request that ended: out of flight and into the endpoint's
// health, in one step under l.mu, so that no Status sees one without the other.
func (l *lane) end(seq uint64, s *sample.Sample) {
	l.mu.Lock()
	delete(l.flights, seq)
	l.health.observe(s)
	l.mu.Unlock()
	l.status.publish()
}
