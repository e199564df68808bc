package stats

// Head-to-head: is an endpoint really slower than the best one, or is the gap noise? Each
// endpoint is compared with the best endpoint of each metric by the difference of medians
// over the retained per-request values (LastTTFT, LastDecodeTPS: the last ≤1000 counted
// requests) and its 95 % percentile-bootstrap confidence interval (BootstrapMedianDiff).

// Metrics compared head to head; the values are the JSON summary's names.
const (
	H2HTTFT   = "ttft_ms"
	H2HDecode = "decode_tps"
)

// Verdict is the plain-words outcome of one head-to-head comparison.
type Verdict string

const (
	VerdictFaster    Verdict = "faster"
	VerdictSlower    Verdict = "slower"
	VerdictUndecided Verdict = "not distinguishable yet" // CI includes 0, or too few samples
)

const (
	// H2HIterations is the number of bootstrap resamples of each comparison.
	H2HIterations = 2000
	// H2HMinSamples is the fewest values each side needs before a verdict other than
	// VerdictUndecided is given (a CI from 3 values is not worth a word).
	H2HMinSamples = 5
)

// HeadToHead compares endpoint Endpoint with the best endpoint Versus on Metric.
type HeadToHead struct {
	Endpoint, Versus         int // indexes into Snapshot.Endpoints
	EndpointName, VersusName string
	Metric                   string // H2HTTFT or H2HDecode
	N, VersusN               int    // values compared on each side

	// Diff is median(endpoint) − median(versus) in the metric's unit (ms, tok/s), [Lo, Hi]
	// its 95 % confidence interval. OK is false, with zeros, when the endpoint has no values.
	Diff, Lo, Hi float64
	OK           bool

	// Verdict is from the endpoint's side: "slower" means worse than the best (higher TTFT,
	// lower decode tok/s), with a CI that excludes 0 and at least H2HMinSamples values each.
	Verdict Verdict
}

// TooFew reports whether a side has fewer than H2HMinSamples values: then the verdict is
// VerdictUndecided whatever the interval says (an interval that excludes 0 is not yet worth
// a word), and a reader must be told so rather than see "+455 [+374,+525] not
// distinguishable yet" contradict itself.
func (h *HeadToHead) TooFew() bool {
	return h.N < H2HMinSamples || h.VersusN < H2HMinSamples
}

// h2hMetric describes one compared metric.
type h2hMetric struct {
	name        string
	lowerBetter bool
	values      func(*EndpointStats) []float64
}

var h2hMetrics = []h2hMetric{
	{H2HTTFT, true, func(e *EndpointStats) []float64 { return e.LastTTFT }},
	{H2HDecode, false, func(e *EndpointStats) []float64 { return e.LastDecodeTPS }},
}

// HeadToHeads compares every endpoint of snap with the best one, TTFT rows first, then
// decode tok/s, each in endpoint order; the best endpoint itself has no row. It returns nil
// with fewer than two endpoints. The best is the lowest TTFT median / highest decode tok/s
// median among endpoints with at least H2HMinSamples values (among those with any value when
// none has that many; the first in order on a tie); a metric no endpoint has values for
// has no rows.
//
// Every comparison uses the same fixed-seed generator, so the same values always give the
// same intervals. The cost is about 20 ms per comparison of 1000 against 1000 values: call
// it off a UI's event loop.
func HeadToHeads(snap *Snapshot) []HeadToHead {
	eps := snap.Endpoints
	if len(eps) < 2 {
		return nil
	}
	var out []HeadToHead
	for _, m := range h2hMetrics {
		best := bestEndpoint(eps, m)
		if best < 0 {
			continue
		}
		bv := m.values(&eps[best])
		for i := range eps {
			if i == best {
				continue
			}
			v := m.values(&eps[i])
			h := HeadToHead{
				Endpoint: i, Versus: best, EndpointName: eps[i].Name, VersusName: eps[best].Name,
				Metric: m.name, N: len(v), VersusN: len(bv), Verdict: VerdictUndecided,
			}
			h.Diff, h.Lo, h.Hi, h.OK = BootstrapMedianDiff(v, bv, H2HIterations, nil)
			if h.OK && h.N >= H2HMinSamples && h.VersusN >= H2HMinSamples {
				h.Verdict = verdict(h.Lo, h.Hi, m.lowerBetter)
			}
			out = append(out, h)
		}
	}
	return out
}

func verdict(lo, hi float64, lowerBetter bool) Verdict {
	switch {
	case lo > 0 && lowerBetter, hi < 0 && !lowerBetter:
		return VerdictSlower
	case hi < 0 && lowerBetter, lo > 0 && !lowerBetter:
		return VerdictFaster
	}
	return VerdictUndecided
}

// bestEndpoint is the index of the best median of m, or -1 when no endpoint has values.
func bestEndpoint(eps []EndpointStats, m h2hMetric) int {
	best := -1
	var bestMed float64
	for _, need := range []int{H2HMinSamples, 1} {
		for i := range eps {
			v := m.values(&eps[i])
			if len(v) < need {
				continue
			}
			med := medianOf(v)
			if best < 0 || (m.lowerBetter && med < bestMed) || (!m.lowerBetter && med > bestMed) {
				best, bestMed = i, med
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}

// medianOf is the median of v, which it leaves unchanged.
func medianOf(v []float64) float64 {
	c := make([]float64, len(v))
	copy(c, v)
	return median(c)
}
