package watch

import (
	"time"
)

// Row is one line of the fleet table: one server, or one model of a server that serves
// several. Every figure is null in JSON where the server does not export it or the window
// holds too little to compute it: never 0 as a stand-in.
type Row struct {
	Key     string            `json:"-"` // the target's key
	Server  string            `json:"server"`
	URL     string            `json:"url"`
	Model   string            `json:"model"` // "" (null in JSON) on a server's one row; set where it serves several
	Labels  map[string]string `json:"labels,omitempty"`
	Kind    Kind              `json:"kind"` // "" (null in JSON) until a scrape recognised the server
	Version *string           `json:"version"`
	Badges  []string          `json:"badges"`
	// LastError is why the latest scrape failed (with the STALE badge), else null.
	LastError *string `json:"last_error"`
	// ScrapedAt is when the server last answered; SpanS the seconds the rates and
	// percentiles cover (at most the window; null before two good scrapes).
	ScrapedAt *time.Time `json:"scraped_at"`
	SpanS     *float64   `json:"span_s"`

	Running   *float64 `json:"requests_running"`
	Waiting   *float64 `json:"requests_waiting"`
	GenTPS    *float64 `json:"gen_tps"`
	PromptTPS *float64 `json:"prompt_tps"`
	// GenLive is false where the generation counter rises only when a request ends (TGI,
	// llama.cpp without /slots): the rate then comes in bursts.
	GenLive        bool       `json:"gen_live"`
	KVCacheUsage   *float64   `json:"kv_cache_usage"`
	PrefixHitRate  *float64   `json:"prefix_cache_hit_rate"`
	TTFT           *Quantiles `json:"ttft_ms"`
	ITL            *Quantiles `json:"itl_ms"`
	Queue          *Quantiles `json:"queue_ms"`
	E2E            *Quantiles `json:"e2e_ms"`
	Preemptions    *float64   `json:"preemptions"`
	SpecAcceptance *float64   `json:"spec_acceptance"`
	GPUPowerW      *float64   `json:"gpu_power_w"`
	TokensPerJoule *float64   `json:"tokens_per_joule"`

	Slots  []Slot        `json:"slots,omitempty"`
	Ollama []OllamaModel `json:"ollama_models,omitempty"`
}

// Quantiles are percentiles estimated from a server's own histogram over the span: linear
// interpolation within a bucket, as Prometheus' histogram_quantile does, so always an
// estimate (Estimate is always true; it is in the JSON so that no reader takes them for
// exact). Count is the observations in the span; P50/P99 null when it is 0.
type Quantiles struct {
	P50      *float64 `json:"p50"`
	P99      *float64 `json:"p99"`
	Count    float64  `json:"count"`
	Estimate bool     `json:"estimate"`
}

// Point is one scrape of a row, for the drill-down charts.
type Point struct {
	At                          time.Time
	GenTPS, Waiting, KV         *float64
	TTFTp50, TTFTp99, ITLp50    *float64
	ITLp99, E2Ep50, E2Ep99      *float64
	Running, PromptTPS, Preempt *float64
}

func pointOf(r Row) Point {
	p := Point{GenTPS: r.GenTPS, Waiting: r.Waiting, KV: r.KVCacheUsage, Running: r.Running, PromptTPS: r.PromptTPS, Preempt: r.Preemptions}
	if r.ScrapedAt != nil {
		p.At = *r.ScrapedAt
	}
	if r.TTFT != nil {
		p.TTFTp50, p.TTFTp99 = r.TTFT.P50, r.TTFT.P99
	}
	if r.ITL != nil {
		p.ITLp50, p.ITLp99 = r.ITL.P50, r.ITL.P99
	}
	if r.E2E != nil {
		p.E2Ep50, p.E2Ep99 = r.E2E.P50, r.E2E.P99
	}
	return p
}

func num(v float64) *float64 { return &v }

// rowsOf computes a server's rows at now, over the window (whole: since its first scrape).
func (f *Fleet) rowsOf(s *server, now time.Time, whole bool) []Row {
	base := Row{Key: s.target.Key(), Server: s.target.Name, URL: s.target.URL, Labels: s.target.Labels, Kind: s.last.Kind, Badges: []string{}}
	if s.last.Version != "" {
		v := s.last.Version
		base.Version = &v
	}
	if s.failures > 0 {
		e := s.last.Error
		base.LastError = &e
		base.Badges = append(base.Badges, BadgeStale)
	}
	if !s.restartedAt.IsZero() && now.Sub(s.restartedAt) < max(f.window, 30*time.Second) {
		base.Badges = append(base.Badges, BadgeRestarted)
	}
	if len(s.loading) > 0 {
		base.Badges = append(base.Badges, BadgeLoading)
	}
	if len(s.good) == 0 {
		return []Row{base}
	}
	last := s.good[len(s.good)-1]
	first := s.good[0]
	if whole {
		first = *s.first
	} else {
		for _, in := range s.good {
			if last.At.Sub(in.At) <= f.window {
				first = in
				break
			}
		}
	}
	at := last.At
	base.ScrapedAt = &at
	base.Slots, base.Ollama = last.Slots, last.Ollama
	span := last.At.Sub(first.At).Seconds()
	if span > 0 {
		base.SpanS = num(span)
	}
	if last.GPU != nil && last.GPU.PowerW != nil {
		base.GPUPowerW = num(*last.GPU.PowerW)
	}
	if len(last.Models) == 0 {
		return []Row{base}
	}
	rows := make([]Row, 0, len(last.Models))
	for _, m := range last.Models {
		r := base
		if len(last.Models) > 1 {
			r.Model = m.Model
		}
		r.fill(m, first, last, span)
		rows = append(rows, r)
	}
	if len(rows) == 1 && base.GPUPowerW != nil {
		rows[0].TokensPerJoule = tokensPerJoule(rows[0], s.good, first, last)
	}
	return rows
}

// fill computes a model's figures from its latest scrape and the span's first.
func (r *Row) fill(m ModelInstant, first, last Instant, span float64) {
	gauge := func(k string) *float64 {
		if v, ok := m.Gauges[k]; ok {
			return num(v)
		}
		return nil
	}
	r.Running, r.Waiting, r.KVCacheUsage = gauge(gRunning), gauge(gWaiting), ratio(gauge(gKV))
	fm, _ := modelIn(first, m.Model)
	delta := func(k string) (float64, bool) {
		a, aok := fm.Counters[k]
		b, bok := m.Counters[k]
		if !aok || !bok || span <= 0 || b < a {
			return 0, false
		}
		return b - a, true
	}
	if d, ok := genDelta(fm, m, first, last); ok && span > 0 {
		r.GenTPS = num(d / span)
	}
	r.GenLive = genLive(r.Kind, m, last)
	if d, ok := delta(cPrompt); ok {
		r.PromptTPS = num(d / span)
	}
	if q, ok := delta(cQueries); ok {
		if h, ok := delta(cHits); ok && q > 0 {
			r.PrefixHitRate = num(h / q)
		}
	} else if g := ratio(gauge(gHitRate)); g != nil {
		r.PrefixHitRate = g
	}
	if d, ok := delta(cPreempt); ok {
		r.Preemptions = num(d)
	}
	if dr, ok := delta(cSpecDrafted); ok && dr > 0 {
		if ac, ok := delta(cSpecAccepted); ok {
			r.SpecAcceptance = num(ac / dr)
		}
	} else if g := ratio(gauge(gSpecRate)); g != nil {
		r.SpecAcceptance = g
	}
	r.TTFT = quantiles(fm, m, hTTFT, span)
	r.ITL = quantiles(fm, m, hITL, span)
	r.Queue = quantiles(fm, m, hQueue, span)
	r.E2E = quantiles(fm, m, hE2E, span)
}

// genDelta is the tokens generated over the span. llama.cpp counts a request's tokens only
// when it ends; the tokens its busy slots have decoded so far are added at both ends, so
// the rate is live.
func genDelta(fm, m ModelInstant, first, last Instant) (float64, bool) {
	a, aok := fm.Counters[cGen]
	b, bok := m.Counters[cGen]
	if !aok || !bok || b < a {
		return 0, false
	}
	return b + decoding(last) - a - decoding(first), true
}

func decoding(in Instant) float64 {
	var sum float64
	for _, s := range in.Slots {
		if s.Processing {
			sum += s.Decoded
		}
	}
	return sum
}

func genLive(k Kind, m ModelInstant, last Instant) bool {
	switch k {
	case KindVLLM:
		return true
	case KindSGLang:
		return true // realtime_tokens_total, else generation_tokens_total: see familyReads
	case KindLlamaCpp:
		return last.Slots != nil
	}
	return false
}

// quantiles estimates p50 and p99 of a histogram's observations over the span; nil when the
// server does not export the histogram (or the span is too short to hold a difference).
func quantiles(fm, m ModelInstant, key string, span float64) *Quantiles {
	h, ok := m.Hists[key]
	if !ok || span <= 0 {
		return nil
	}
	earlier, ok := fm.Hists[key]
	if !ok {
		return nil
	}
	d, ok := h.Minus(earlier)
	if !ok {
		return nil
	}
	q := &Quantiles{Count: d.Count, Estimate: true}
	if v, ok := d.Quantile(0.5); ok {
		q.P50 = num(v * 1000)
	}
	if v, ok := d.Quantile(0.99); ok {
		q.P99 = num(v * 1000)
	}
	return q
}

// ratio keeps a 0–1 figure only when it is one (vLLM V0 writes -1 for a disabled cache).
func ratio(v *float64) *float64 {
	if v == nil || *v < 0 {
		return nil
	}
	return num(min(*v, 1))
}

// tokensPerJoule is the tokens generated over the span divided by the energy the GPUs used
// in it: the energy counter's increase where the exporter has one, else the power integrated
// over the scrapes (trapezoids). Several rows of one server share its GPUs: none is given.
func tokensPerJoule(r Row, good []Instant, first, last Instant) *float64 {
	if r.GenTPS == nil || r.SpanS == nil {
		return nil
	}
	tokens := *r.GenTPS * *r.SpanS
	var joules float64
	if first.GPU != nil && last.GPU != nil && first.GPU.EnergyMJ != nil && last.GPU.EnergyMJ != nil &&
		*last.GPU.EnergyMJ >= *first.GPU.EnergyMJ {
		joules = (*last.GPU.EnergyMJ - *first.GPU.EnergyMJ) / 1000
	} else {
		var prev *Instant
		for i := range good {
			in := good[i]
			if in.At.Before(first.At) || in.GPU == nil || in.GPU.PowerW == nil {
				continue
			}
			if prev != nil {
				joules += (*prev.GPU.PowerW + *in.GPU.PowerW) / 2 * in.At.Sub(prev.At).Seconds()
			}
			prev = &good[i]
		}
	}
	if joules <= 0 {
		return nil
	}
	return num(tokens / joules)
}
