package stats

// openLoop is what an Aggregator knows of open-loop arrivals (probe.Options.Rate): the rate,
// and per endpoint the arrivals generated and dropped, as the Runner counts them.
type openLoop struct {
	rate             float64
	offered, dropped []uint64
}

// SetRate records that requests arrive open-loop at rate per second per endpoint; Snapshots
// carry it (Snapshot.Rate), and summaries then show the client queue.
func (a *Aggregator) SetRate(rate float64) { a.open.rate = rate }

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

func (o *openLoop) fill(snap *Snapshot) {
	snap.Rate = o.rate
	for i := range snap.Endpoints {
		if i < len(o.offered) {
			snap.Endpoints[i].Arrivals, snap.Endpoints[i].DroppedArrivals = o.offered[i], o.dropped[i]
		}
	}
}
