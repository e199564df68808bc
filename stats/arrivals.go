package stats

import (
	"time"

	"tokscope/sample"
)

// openLoop is what an Aggregator knows of open-loop arrivals (probe.Options.Rate): the rate,
// and per endpoint the arrivals generated and dropped, as the Runner counts them.
type openLoop struct {
	rate             float64
	offered, dropped []uint64
	waiting          [][]time.Time // per endpoint, the arrival instants still waiting
}

// Rate is the open-loop arrival rate per endpoint the Aggregator was built with (WithRate);
// 0 in the closed loop.
func (a *Aggregator) Rate() float64 { return a.open.rate }

// SetArrivals records endpoint ep's open-loop arrivals so far (probe.Runner.Arrivals):
// generated, and dropped because the queue was full. They are the Runner's totals since the
// start, which Reset does not clear.
func (a *Aggregator) SetArrivals(ep int, offered, dropped uint64) {
	if ep < 0 {
		return
	}
	for len(a.open.offered) <= ep {
		a.open.offered = append(a.open.offered, 0)
		a.open.dropped = append(a.open.dropped, 0)
	}
	a.open.offered[ep], a.open.dropped[ep] = offered, dropped
}

// SetWaiting records endpoint ep's arrivals still waiting for a slot (probe.Runner.Waiting),
// as their arrival instants. A Snapshot counts them (Waiting) and puts their wait so far into
// the client queue distribution: an overloaded endpoint's longest waits are the ones still
// going on, and leaving them out would report the queue shortest when it is longest.
func (a *Aggregator) SetWaiting(ep int, arrivals []time.Time) {
	if ep < 0 {
		return
	}
	for len(a.open.waiting) <= ep {
		a.open.waiting = append(a.open.waiting, nil)
	}
	a.open.waiting[ep] = append(a.open.waiting[ep][:0], arrivals...)
}

// ArrivalSource is what counts the open-loop arrivals: the probe Runner (Arrivals, Waiting).
type ArrivalSource interface {
	Arrivals(ep sample.EndpointIndex) (offered, dropped uint64)
	Waiting(ep sample.EndpointIndex) []time.Time
}

// PollArrivals copies src's arrival counts and the arrivals still waiting, for each of the
// Aggregator's endpoints, into the statistics (SetArrivals, SetWaiting): the one way they
// come in, whoever polls (the UI before a snapshot, a headless run at its end). Nothing in
// the closed loop.
func (a *Aggregator) PollArrivals(src ArrivalSource) {
	if a.open.rate <= 0 || src == nil {
		return
	}
	for i := range a.eps {
		ep := sample.EndpointIndex(i)
		offered, dropped := src.Arrivals(ep)
		a.SetArrivals(i, offered, dropped)
		a.SetWaiting(i, src.Waiting(ep))
	}
}

func (o *openLoop) fill(snap *Snapshot) {
	snap.Rate = o.rate
	for i := range snap.Endpoints {
		if i < len(o.offered) {
			snap.Endpoints[i].Arrivals, snap.Endpoints[i].DroppedArrivals = o.offered[i], o.dropped[i]
		}
	}
}

// queueDist is endpoint ep's client queue at now: the waits of the requests that started,
// and the waits so far of the arrivals still waiting.
func (o *openLoop) queueDist(ep int, started *series, now time.Time) (Dist, int) {
	if ep >= len(o.waiting) || len(o.waiting[ep]) == 0 {
		return started.dist(), 0
	}
	all := newSeries()
	all.merge(started)
	for _, at := range o.waiting[ep] {
		all.recordDur(max(now.Sub(at), 0))
	}
	return all.dist(), len(o.waiting[ep])
}
