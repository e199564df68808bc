package ui

import (
	"math"
	"strconv"

	"tokscope/probe"
	"tokscope/stats"
)

// The figure lines of a card. Every figure says what it is where it stands — "last", "live",
// "p50" with its window — and each line has shorter forms for narrow cards that drop a
// figure before they drop a label or a unit: tok/s and ms stay at 80 columns.

// cardMs formats milliseconds for a line whose unit is ms: whole ms from 10 on, however
// large (ms() would switch to seconds and contradict the unit).
func cardMs(v float64) string {
	switch {
	case !finite(v):
		return dash
	case v >= 10:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// streamsText is "1 stream" or "4 streams".
func streamsText(n int) string {
	if n == 1 {
		return "1 stream"
	}
	return itoa(n) + " streams"
}

// modelLine is the model, the cache mode (cacheLabel, when there is one) and the concurrency:
// "llama-3.1-8b-instruct    cache bust · 2 streams".
func modelLine(s *Styles, model, cache string, concurrency, w int) string {
	right := streamsText(concurrency)
	if cache != "" {
		right = "cache " + cache + " · " + right
	}
	return spread(s.Muted.Render(model), s.Muted.Render(right), w)
}

// liveLine is the counted requests in flight that have a first token: how many, their
// tokens so far of max_tokens and the median of their decode rates so far,
// "1 in flight · ≈45/160 tok · ≈141 tok/s"; before any, a warm-up in flight, so labelled;
// with none, the newest finished decode rate.
func liveLine(s *Styles, es *stats.EndpointStats, warmup *probe.Progress, w int) string {
	L, V, U, F := s.Label.Render, s.Value.Render, s.Unit.Render, s.Faint.Render
	in := es.InFlight
	if in.Requests == 0 && warmup.Chunks > 0 && !es.Latest.DecodeOK {
		in = stats.InFlight{Requests: 1, TokensMin: warmup.Tokens, TokensMax: warmup.Tokens,
			MaxTokens: warmup.MaxTokens, Estimated: warmup.Estimated}
		in.DecodeTPS, in.DecodeOK = warmup.DecodeRate()
		return inFlightLine(s, in, "warm-up", "warm-up", w)
	}
	if in.Requests == 0 {
		rate := dash
		if es.Latest.DecodeOK {
			rate = approx(es.TokenSource) + num(es.Latest.DecodeTPS)
		}
		return figureFit(w,
			s.Muted.Render("none in flight")+F(" · ")+L("last ")+V(rate)+U(" tok/s"),
			s.Muted.Render("0 live")+F(" · ")+L("last ")+V(rate)+U(" tok/s"))
	}
	n := itoa(in.Requests)
	return inFlightLine(s, in, n+" in flight", n+" live", w)
}

// inFlightLine is "1 in flight · ≈45/160 tok · ≈141 tok/s", long or short the label.
func inFlightLine(s *Styles, in stats.InFlight, long, short string, w int) string {
	L, V, U, F := s.Label.Render, s.Value.Render, s.Unit.Render, s.Faint.Render
	mark := ""
	if in.Estimated {
		mark = "≈"
	}
	toks := mark + itoa(int(in.TokensMax))
	if in.Requests > 1 && int(in.TokensMin) != int(in.TokensMax) {
		toks = mark + itoa(int(in.TokensMin)) + "–" + itoa(int(in.TokensMax))
	}
	if in.MaxTokens > 0 {
		toks += "/" + itoa(in.MaxTokens)
	}
	rate := dash
	if in.DecodeOK {
		rate = mark + num(in.DecodeTPS)
	}
	return figureFit(w,
		L(long)+F(" · ")+V(toks)+U(" tok")+F(" · ")+V(rate)+U(" tok/s"),
		L(long+" ")+V(toks)+U(" tok ")+V(rate)+U(" tok/s"),
		L(short)+F(" · ")+V(toks)+U(" tok")+F(" · ")+V(rate)+U(" tok/s"),
		L(short+" ")+V(toks)+U(" tok ")+V(rate)+U(" tok/s"),
		L(short+" ")+V(rate)+U(" tok/s"))
}

// decodeLine is decode tok/s of the requests that finished in the last 60 s: the median and
// the slow tail, "decode tok/s · 60s p50 140 · p10 131".
func decodeLine(s *Styles, es *stats.EndpointStats, w int) string {
	L, V, U, F := s.Label.Render, s.Value.Render, s.Unit.Render, s.Faint.Render
	d := es.Recent.DecodeTPS
	mark := ""
	if d.Count > 0 {
		mark = approx(es.TokenSource)
	}
	q50, q10 := mark+pick(d, p50, num), mark+pick(d, p10, num)
	return figureFit(w,
		L("decode ")+U("tok/s")+F(" · ")+L("60s p50 ")+V(q50)+F(" · ")+L("p10 ")+V(q10)+s.Muted.Render(" (slow)"),
		L("decode ")+U("tok/s")+F(" · ")+L("60s p50 ")+V(q50)+F(" · ")+L("p10 ")+V(q10),
		L("decode ")+U("tok/s")+L(" 60s p50 ")+V(q50)+L(" p10 ")+V(q10),
		L("dec ")+U("tok/s")+L(" 60s p50 ")+V(q50)+L(" p10 ")+V(q10),
		L("dec ")+U("tok/s")+L(" p50 ")+V(q50)+L(" p10 ")+V(q10)) // narrower than 80 columns
}

// tpsLine is aggregate tok/s over the last 10 s (the chart below has it per second), the
// requests and where token counts come from: "agg ≈412 tok/s 10s · 30 req · tokens: usage".
func tpsLine(s *Styles, es *stats.EndpointStats, w int) string {
	L, V, U, F := s.Label.Render, s.Value.Render, s.Unit.Render, s.Faint.Render
	mark := approx(es.TokenSource)
	if es.InFlight.Estimated {
		mark = "≈"
	}
	agg := V(mark+num(es.AggregateTPS)) + U(" tok/s")
	if es.Requests == 0 && es.InFlight.Requests == 0 {
		agg = V(dash) + U(" tok/s") // nothing counted yet: no rate, not 0
	}
	req := V(itoa(es.Requests)) + L(" req")
	src := L("tokens: ") + s.Muted.Render(sourceLabel(es.TokenSource))
	return figureFit(w,
		L("agg ")+agg+L(" (10s)")+F(" · ")+req+F(" · ")+src,
		L("agg ")+agg+L(" 10s")+F(" · ")+req+F(" · ")+src,
		L("agg ")+agg+L(" 10s")+F(" · ")+req,
		L("agg ")+agg+L(" 10s"))
}

// ttftLine is the newest TTFT (in flight or finished) and the TTFT of the requests that
// finished in the last 60 s: "ttft 62 ms last · 60s p50 61 · p95 80".
func ttftLine(s *Styles, es *stats.EndpointStats, w int) string {
	L, V, U, F := s.Label.Render, s.Value.Render, s.Unit.Render, s.Faint.Render
	last := dash
	if es.Latest.TTFTOK {
		last = cardMs(es.Latest.TTFT)
	}
	d := es.Recent.TTFT
	q50, q95 := pick(d, p50, cardMs), pick(d, p95, cardMs)
	return figureFit(w,
		L("ttft ")+V(last)+U(" ms")+L(" last")+F(" · ")+L("60s p50 ")+V(q50)+F(" · ")+L("p95 ")+V(q95),
		L("ttft ")+V(last)+U(" ms")+L(" last")+F(" · ")+L("60s p50 ")+V(q50)+L(" p95 ")+V(q95),
		L("ttft ")+U("ms ")+V(last)+L(" last 60s p50 ")+V(q50)+L(" p95 ")+V(q95),
		L("ttft ")+V(last)+U(" ms")+L(" last")+F(" · ")+L("60s p50 ")+V(q50),
		L("ttft ")+V(last)+U(" ms")+L(" last"))
}
