package watch

import (
	"math"
	"testing"
)

// TestQuantileAsPrometheus checks the interpolation against the expected results of
// Prometheus' own test file (promql/promqltest/testdata/histograms.test, "testhistogram" at
// 50m): a histogram starting at a positive bound and one starting at a negative bound.
func TestQuantileAsPrometheus(t *testing.T) {
	positive := Hist{Bounds: []float64{0.1, 0.2, 1}, Cum: []float64{50, 70, 110}, Count: 120}
	negative := Hist{Bounds: []float64{-0.2, -0.1, 0.3}, Cum: []float64{10, 20, 20}, Count: 30}
	cases := []struct {
		h    Hist
		q    float64
		want float64
	}{
		{positive, 0, 0}, {positive, 0.2, 0.048}, {positive, 0.5, 0.15}, {positive, 0.8, 0.72}, {positive, 1, 1},
		{negative, 0, -0.2}, {negative, 0.2, -0.2}, {negative, 0.5, -0.15}, {negative, 0.8, 0.3}, {negative, 1, 0.3},
	}
	for _, c := range cases {
		got, ok := c.h.Quantile(c.q)
		if !ok || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Quantile(%v) of %v = %v, %v; want %v", c.q, c.h.Cum, got, ok, c.want)
		}
	}
}

func TestQuantileUndefined(t *testing.T) {
	for _, h := range []Hist{
		{Bounds: []float64{0.1}, Cum: []float64{0}, Count: 0}, // no observations
		{Count: 5}, // no finite bucket
	} {
		if v, ok := h.Quantile(0.5); ok {
			t.Errorf("Quantile of %+v = %v; want no estimate", h, v)
		}
	}
	h := Hist{Bounds: []float64{1}, Cum: []float64{1}, Count: 2}
	if _, ok := h.Quantile(1.5); ok {
		t.Error("q > 1 gave an estimate")
	}
}

// A scrape can catch the buckets mid-update; like Prometheus, counts are made monotonic.
func TestQuantileForcesMonotonic(t *testing.T) {
	h := Hist{Bounds: []float64{1, 2, 3}, Cum: []float64{10, 8, 20}, Count: 20}
	got, _ := h.Quantile(0.5) // rank 10: the first bucket (10), taken as 10, 10, 20
	if got != 1 {
		t.Errorf("got %v, want 1", got)
	}
}

func TestHistMinus(t *testing.T) {
	a := Hist{Bounds: []float64{1, 2}, Cum: []float64{1, 3}, Count: 4, Sum: 5}
	b := Hist{Bounds: []float64{1, 2}, Cum: []float64{3, 7}, Count: 10, Sum: 12}
	d, ok := b.Minus(a)
	if !ok || d.Cum[0] != 2 || d.Cum[1] != 4 || d.Count != 6 || d.Sum != 7 {
		t.Errorf("b − a = %+v, %v", d, ok)
	}
	if _, ok := a.Minus(b); ok {
		t.Error("a count going back gave a difference")
	}
	if _, ok := b.Minus(Hist{Bounds: []float64{1, 5}, Cum: []float64{0, 0}}); ok {
		t.Error("different buckets gave a difference")
	}
}
