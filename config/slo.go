package config

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// SLO is a set of per-request objectives (a request meets the SLO when it meets every one);
// a zero duration is no objective. ITL is the longest gap between two token-bearing chunks of
// the request.
type SLO struct {
	TTFT, TPOT, E2E, ITL time.Duration
}

// SLOKeys are the objectives' names in --slo, the config and JSON, in the order shown.
var SLOKeys = []string{"ttft", "tpot", "e2e", "itl"}

// Objective is one objective of an SLO.
type Objective struct {
	Key   string // one of SLOKeys
	Limit time.Duration
}

// Objectives lists the objectives that are set, in SLOKeys order.
func (s SLO) Objectives() []Objective {
	var out []Objective
	for _, k := range SLOKeys {
		if d := s.Limit(k); d > 0 {
			out = append(out, Objective{Key: k, Limit: d})
		}
	}
	return out
}

// Set reports whether any objective is set.
func (s SLO) Set() bool { return len(s.Objectives()) > 0 }

// Limit is the limit of objective key (one of SLOKeys); 0 when it is not set.
func (s *SLO) Limit(key string) time.Duration {
	if f := s.field(key); f != nil {
		return *f
	}
	return 0
}

func (s *SLO) field(key string) *time.Duration {
	switch key {
	case "ttft":
		return &s.TTFT
	case "tpot":
		return &s.TPOT
	case "e2e":
		return &s.E2E
	case "itl":
		return &s.ITL
	}
	return nil
}

// String is the SLO as --slo spells it.
func (s SLO) String() string {
	var parts []string
	for _, o := range s.Objectives() {
		parts = append(parts, o.Key+"="+o.Limit.String())
	}
	return strings.Join(parts, ",")
}

// ParseSLO reads a --slo list such as "ttft=500ms,tpot=50ms,e2e=20s,itl=200ms".
func ParseSLO(list string) (SLO, error) {
	var s SLO
	if strings.TrimSpace(list) == "" {
		return s, fmt.Errorf("empty: give objectives like ttft=500ms,tpot=50ms,e2e=20s,itl=200ms")
	}
	for _, item := range strings.Split(list, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		key = strings.ToLower(strings.TrimSpace(key))
		f := s.field(key)
		switch {
		case !ok:
			return SLO{}, fmt.Errorf("%q is not key=duration (keys: %s)", item, strings.Join(SLOKeys, ", "))
		case f == nil:
			return SLO{}, fmt.Errorf("unknown objective %q (keys: %s)", key, strings.Join(SLOKeys, ", "))
		case *f != 0:
			return SLO{}, fmt.Errorf("%s is given twice", key)
		}
		d, err := time.ParseDuration(strings.TrimSpace(val))
		if err != nil {
			return SLO{}, fmt.Errorf("%s must be a duration such as 500ms or 2s, got %q", key, val)
		}
		if msg := checkDuration(key, d, false); msg != "" {
			return SLO{}, fmt.Errorf("%s", msg)
		}
		*f = d
	}
	return s, nil
}

// Price is what an endpoint's output costs: per token (Input/Output, USD per 1M tokens) or
// per GPU hour (GPUHour, USD), never both.
type Price struct {
	Input, Output float64 // USD per 1M prompt / output tokens
	GPUHour       float64 // USD per hour of the hardware serving the endpoint
}

// PerGPUHour reports whether the price is for GPU time rather than tokens.
func (p Price) PerGPUHour() bool { return p.GPUHour > 0 }

var priceKeys = []string{"input", "output", "gpu_hour"}

func checkPrice(p Price) string {
	for _, v := range []float64{p.Input, p.Output, p.GPUHour} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("price must be a number ≥ 0 (USD), got %v", v)
		}
	}
	if p.GPUHour > 0 && (p.Input > 0 || p.Output > 0) {
		return "price: give either input/output (USD per 1M tokens) or gpu_hour (USD per hour), not both"
	}
	return ""
}

func checkSLO(s SLO) string {
	for _, k := range SLOKeys {
		if d := *s.field(k); d < 0 {
			return fmt.Sprintf("slo (--slo) %s must not be negative, got %s", k, d)
		}
	}
	return ""
}

// slo decodes an slo: mapping of durations.
func (l *loader) slo(e entry) (*SLO, *Error) {
	es, err := l.entries(e.value, "slo", 0)
	if err != nil {
		return nil, err
	}
	var s SLO
	for _, se := range es {
		f := s.field(se.key)
		if f == nil {
			return nil, l.errNode(se.keyNode, "slo: %s", unknownKey(se.key, SLOKeys))
		}
		d, ok, err := l.duration(se, false)
		if err != nil {
			return nil, err
		}
		if ok {
			*f = d
		}
	}
	return &s, nil
}

// price decodes a price: mapping of USD amounts.
func (l *loader) price(e entry) (*Price, *Error) {
	es, err := l.entries(e.value, "price", 0)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, l.errValue(e, "price is empty: give input and output (USD per 1M tokens) or gpu_hour (USD per hour)")
	}
	var p Price
	for _, pe := range es {
		var f *float64
		switch pe.key {
		case "input":
			f = &p.Input
		case "output":
			f = &p.Output
		case "gpu_hour":
			f = &p.GPUHour
		default:
			return nil, l.errNode(pe.keyNode, "price: %s", unknownKey(pe.key, priceKeys))
		}
		v, err := l.usd(pe)
		if err != nil {
			return nil, err
		}
		*f = v
	}
	if msg := checkPrice(p); msg != "" {
		return nil, l.errValue(e, "%s", msg)
	}
	return &p, nil
}

// usd reads a non-negative number (an integer or a decimal).
func (l *loader) usd(e entry) (float64, *Error) {
	r, err := l.resolve(e.value)
	if err != nil {
		return 0, err
	}
	var v float64
	switch t := r.(type) {
	case *ast.IntegerNode:
		switch x := t.Value.(type) {
		case int64:
			v = float64(x)
		case uint64:
			v = float64(x)
		}
	case *ast.FloatNode:
		v = t.Value
	default:
		got := "nothing"
		if !isNull(r) {
			got = kindOf(r)
		}
		return 0, l.errValue(e, "price %s must be a number of USD, e.g. 0.60, got %s", e.key, got)
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, l.errValue(e, "price %s must be a number ≥ 0 (USD), got %v", e.key, v)
	}
	return v, nil
}

// mergeSLO lays own's objectives over base's, key by key.
func mergeSLO(base SLO, own *SLO) SLO {
	if own == nil {
		return base
	}
	for _, k := range SLOKeys {
		if d := *own.field(k); d > 0 {
			*base.field(k) = d
		}
	}
	return base
}
