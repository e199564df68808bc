package servermetrics

import (
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func stringsReader(s string) io.Reader { return strings.NewReader(s) }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestCounterWindow(t *testing.T) {
	var w counterWindow
	if _, _, ok := w.add(t0, 100); ok {
		t.Fatal("the first value has no increment")
	}
	if r := w.rate(); r.OK {
		t.Fatalf("one point has no rate, got %v", r.V)
	}
	d, span, ok := w.add(t0.Add(time.Second), 150)
	if !ok || d != 50 || span != time.Second {
		t.Fatalf("increment %v over %v (%v), want 50 over 1s", d, span, ok)
	}
	for i := 2; i <= 30; i++ {
		w.add(t0.Add(time.Duration(i)*time.Second), 100+50*float64(i))
	}
	if r := w.rate(); !r.OK || math.Abs(r.V-50) > 1e-9 {
		t.Fatalf("rate %+v, want 50/s", r)
	}
	if inc, span := w.increase(); span != RateWindow || inc != 500 {
		t.Fatalf("window holds %v over %v, want 500 over %v (bounded)", inc, span, RateWindow)
	}
	// A dip (two reads not taken at once) is skipped; the next increment covers both.
	if _, _, ok := w.add(t0.Add(31*time.Second), 1590); ok {
		t.Fatal("a dip must be skipped")
	}
	d, span, ok = w.add(t0.Add(32*time.Second), 1700)
	if !ok || d != 100 || span != 2*time.Second {
		t.Fatalf("after a dip: %v over %v (%v), want 100 over 2s", d, span, ok)
	}
	// A restart (the counter falls below half): the window starts again.
	if _, _, ok := w.add(t0.Add(33*time.Second), 3); ok {
		t.Fatal("a restart has no increment")
	}
	if r := w.rate(); r.OK {
		t.Fatalf("right after a restart there is no rate, got %v", r.V)
	}
}

func TestTrackerGaugeThroughput(t *testing.T) {
	var tr tracker
	in := instant{kind: KindSGLang, genGauge: some(80), hitGauge: some(0.5), gen: some(1000)}
	r := tr.reading(t0, in)
	if !r.GenTPS.OK || r.GenTPS.V != 80 || !r.GenLive || r.GenTokens.OK {
		t.Fatalf("first scrape: %+v", r)
	}
	r = tr.reading(t0.Add(2*time.Second), in)
	if !r.GenTokens.OK || r.GenTokens.V != 160 || r.GenSpan != 2*time.Second {
		t.Fatalf("tokens in the span from the gauge: %+v over %v, want 160 over 2s", r.GenTokens, r.GenSpan)
	}
	if r.PrefixCacheHitRate != some(0.5) || r.PrefixFromCounters {
		t.Fatalf("hit rate from the gauge: %+v", r)
	}
}

func TestTrackerPrefixCounters(t *testing.T) {
	var tr tracker
	in := instant{kind: KindVLLM, hits: some(0), queries: some(0)}
	tr.reading(t0, in)
	in.hits, in.queries = some(30), some(40)
	r := tr.reading(t0.Add(time.Second), in)
	if !r.PrefixFromCounters || r.PrefixHits != 30 || r.PrefixQueries != 40 {
		t.Fatalf("increments: %+v", r)
	}
	wantValue(t, "hit rate", r.PrefixCacheHitRate, 0.75)
	// Idle for longer than the window: no queries in it, no rate (not 0 %).
	for i := 2; i < 20; i++ {
		r = tr.reading(t0.Add(time.Duration(i)*time.Second), in)
	}
	wantAbsent(t, "hit rate with no queries in the window", r.PrefixCacheHitRate)
}
