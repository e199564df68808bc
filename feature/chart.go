package feature

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// The report's charts as data (package report draws them, in each endpoint's colour), and
// its rules for drawing per-request data, which the report's own sections and the features'
// share.

// Chart is one chart of a report section. With no layer it is not drawn: the page says
// Empty ("no data" when "").
type Chart struct {
	ID, Title string
	XLabel    string // with its unit, e.g. "time since start (s)"
	YLabel    string
	Note      string // a caption: what is drawn and how it is aggregated
	Empty     string
	YFromZero bool
	XFromZero bool
	YInteger  bool      // the Y values are counts
	LogX      bool      // a logarithmic X axis
	Headroom  bool      // the points carry labels: leave room above and right
	XTicks    []float64 // when set, the only ticks of the X axis
	Refs      []RefLine // horizontal guides
	XMin      *float64
	XMax      *float64
	YMax      *float64
	Layers    []Layer
	Legend    []LegendItem
}

// LayerKind is how a layer draws its points.
type LayerKind int

const (
	DrawLine   LayerKind = iota // a polyline through the points
	DrawPoints                  // a dot per point
	DrawBand                    // the area between Lo and Hi
	DrawMarks                   // a larger ringed dot per point
)

// Layer is one endpoint's data in a chart.
type Layer struct {
	Ep     int // the endpoint's index in the report (ReportEndpoint.Index): its colour
	Kind   LayerKind
	Xs, Ys []float64
	Lo, Hi []float64 // DrawBand: the band's bounds at each x
	Labels []string  // optional text beside each point
}

// RefLine is a horizontal guide at Y, labelled.
type RefLine struct {
	Y     float64
	Label string
}

// LegendItem is one entry of a chart's legend.
type LegendItem struct {
	Text string
	Ep   int  // colour
	Mark bool // a dot rather than a line
}

// Aggregation rules that keep a report small however long the run (DESIGN: 10,000 requests
// under 5 MB): a time series has at most MaxBins points per endpoint (seconds grouped into
// wider bins when the run is long); a per-request scatter keeps every Point up to
// MaxScatter per endpoint, else becomes the median and p10–p90 band of each bin; a CDF is
// drawn through at most CDFPoints quantiles.
const (
	MaxBins    = 300
	MaxScatter = 1500
	CDFPoints  = 200
)

// binWidths are the widths a time series' bins may take, in seconds.
var binWidths = []int64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400}

// TimeAxis maps the run's wall-clock span onto the X axis of the time series: seconds (or
// minutes, for runs over 20 minutes) since the first request's t0, in bins of width seconds
// aligned on whole Unix seconds.
type TimeAxis struct {
	First, Last int64 // Unix ns
	FirstSec    int64 // Unix second of First
	Width       int64 // bin width, s
	Bins        int
	PerMinute   bool
}

func NewTimeAxis(first, last int64) TimeAxis {
	a := TimeAxis{First: first, Last: last, FirstSec: FloorDiv(first, int64(time.Second))}
	lastSec := FloorDiv(last, int64(time.Second))
	span := lastSec - a.FirstSec + 1
	a.Width = binWidths[len(binWidths)-1]
	for _, w := range binWidths {
		if (span+w-1)/w <= MaxBins {
			a.Width = w
			break
		}
	}
	a.Bins = int((span + a.Width - 1) / a.Width)
	a.PerMinute = time.Duration(last-first) > 20*time.Minute
	return a
}

func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// Bin is the bin holding the Unix second sec, or -1 outside the run.
func (a *TimeAxis) Bin(sec int64) int {
	i := (sec - a.FirstSec) / a.Width
	if sec < a.FirstSec || i >= int64(a.Bins) {
		return -1
	}
	return int(i)
}

// BinSpan is the part of bin i the run covers, Unix ns.
func (a *TimeAxis) BinSpan(i int) (lo, hi int64) {
	lo = (a.FirstSec + int64(i)*a.Width) * int64(time.Second)
	hi = lo + a.Width*int64(time.Second)
	return max(lo, a.First), min(hi, a.Last)
}

// X is the X coordinate of Unix ns t.
func (a *TimeAxis) X(t int64) float64 {
	s := float64(t-a.First) / float64(time.Second)
	if a.PerMinute {
		return s / 60
	}
	return s
}

// BinX is the X coordinate of bin i's middle (of its covered part).
func (a *TimeAxis) BinX(i int) float64 {
	lo, hi := a.BinSpan(i)
	return a.X(lo + (hi-lo)/2)
}

// usable reports whether bin i covers enough of its width for a rate over it to mean
// something: the first and last bins of a run are partial, and a rate over a sliver of a
// second is noise.
func (a *TimeAxis) Usable(i int) bool {
	lo, hi := a.BinSpan(i)
	return hi-lo >= a.Width*int64(time.Second)/2 || a.Bins == 1 && hi > lo
}

func (a *TimeAxis) Label() string {
	if a.PerMinute {
		return "time since start (min)"
	}
	return "time since start (s)"
}

// Per is "per second" or "per N s bin", for captions.
func (a *TimeAxis) Per() string {
	if a.Width == 1 {
		return "per second"
	}
	return fmt.Sprintf("per %s", time.Duration(a.Width)*time.Second)
}

// Quantile is the q-quantile (0–1) of sorted values, by the nearest-rank rule.
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// CDF returns at most CDFPoints points (value, fraction ≤ value) of values' empirical CDF.
func CDF(values []float64) (xs, ys []float64) {
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return nil, nil
	}
	if n <= CDFPoints {
		for i, x := range v {
			xs, ys = append(xs, x), append(ys, float64(i+1)/float64(n))
		}
		return xs, ys
	}
	for k := 0; k <= CDFPoints; k++ {
		q := float64(k) / CDFPoints
		i := min(int(math.Round(q*float64(n-1))), n-1)
		xs, ys = append(xs, v[i]), append(ys, float64(i+1)/float64(n))
	}
	return xs, ys
}

// Point is one per-request value at an X position (t0 for time, prompt tokens, …).
type Point struct{ X, Y float64 }

// ScatterOrBand draws points as they are when there are few, else as the median and the
// p10–p90 band of the points in each of at most MaxBins equal slices of the X range. It
// reports whether it aggregated.
func ScatterOrBand(ep int, pts []Point) ([]Layer, bool) {
	if len(pts) == 0 {
		return nil, false
	}
	slices.SortFunc(pts, func(a, b Point) int {
		if c := cmp.Compare(a.X, b.X); c != 0 {
			return c
		}
		return cmp.Compare(a.Y, b.Y)
	})
	if len(pts) <= MaxScatter {
		l := Layer{Ep: ep, Kind: DrawPoints}
		for _, p := range pts {
			l.Xs, l.Ys = append(l.Xs, p.X), append(l.Ys, p.Y)
		}
		return []Layer{l}, false
	}
	lo, hi := pts[0].X, pts[len(pts)-1].X
	bins := min(MaxBins, 100)
	width := (hi - lo) / float64(bins)
	if width <= 0 {
		width, bins = 1, 1
	}
	groups := make([][]float64, bins)
	for _, p := range pts {
		i := min(int((p.X-lo)/width), bins-1)
		groups[i] = append(groups[i], p.Y)
	}
	med := Layer{Ep: ep, Kind: DrawLine}
	band := Layer{Ep: ep, Kind: DrawBand}
	for i, g := range groups {
		if len(g) == 0 {
			continue
		}
		slices.Sort(g)
		x := lo + (float64(i)+0.5)*width
		med.Xs, med.Ys = append(med.Xs, x), append(med.Ys, Quantile(g, 0.5))
		band.Xs = append(band.Xs, x)
		band.Lo, band.Hi = append(band.Lo, Quantile(g, 0.1)), append(band.Hi, Quantile(g, 0.9))
	}
	band.Ys = band.Lo
	return []Layer{band, med}, true
}
