package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Tiers (--tier NAME=OBJECTIVES, config tiers:): a named set of objectives on percentiles of
// per-request metrics, e.g. fast = otps.p25>=100,ttft.p90<=15s. This file reads their syntax;
// what a metric name means (the registry of per-request metrics) and a bound's unit are
// resolved by sweep, which can see the registry: config is below it. An objective keeps where
// it was written, so that sweep's complaint about it still points at file:line:col.

// Tier is one named tier.
type Tier struct {
	Name       string
	Objectives []TierObjective
}

// TierObjective is one objective of a tier: Metric's Percentile-th percentile Op Bound.
type TierObjective struct {
	Text       string  // as written, trimmed: "otps.p25>=30"
	Metric     string  // as written, lower-cased: "otps"
	Percentile float64 // (0, 100]
	AtLeast    bool    // ">=" (true) or "<=" (false)
	Bound      string  // as written: "30", "15s"
	// Where it was written: File, Line, Col and the source line with a caret (config tiers:);
	// zero from --tier.
	File      string
	Line, Col int
	Snippet   string
}

// Err is a complaint about the objective, at its place when it has one.
func (o *TierObjective) Err(format string, args ...any) *Error {
	return &Error{File: o.File, Line: o.Line, Col: o.Col, Msg: fmt.Sprintf(format, args...), Snippet: o.Snippet}
}

// MaxTiers bounds the tiers of a run (each is judged on every step and drawn in every view).
const MaxTiers = 8

var tierNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

// objectiveRE is METRIC.pQ OP BOUND.
var objectiveRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]*)\.([A-Za-z][A-Za-z0-9.]*)\s*(>=|<=|=>|=<|>|<|==|=)\s*(.*)$`)

const tierExample = "e.g. otps.p25>=30,ttft.p90<=15s"

// ParseTierFlag reads one --tier value, NAME=OBJECTIVES.
func ParseTierFlag(s string) (Tier, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return Tier{}, fmt.Errorf("give NAME=OBJECTIVES, %s", "e.g. fast=otps.p25>=100,ttft.p90<=15s")
	}
	return ParseTier(strings.TrimSpace(name), list)
}

// ParseTier reads a tier's objectives, a comma-separated list such as
// "otps.p25>=30,ttft.p90<=15s".
func ParseTier(name, list string) (Tier, error) {
	if !tierNameRE.MatchString(name) {
		return Tier{}, fmt.Errorf("tier name %q: use letters, digits, '_', '-' or '.', at most 32", name)
	}
	t := Tier{Name: name}
	if strings.TrimSpace(list) == "" {
		return t, fmt.Errorf("tier %s has no objectives: %s", name, tierExample)
	}
	for _, item := range strings.Split(list, ",") {
		o, err := parseObjective(item)
		if err != nil {
			return Tier{}, fmt.Errorf("tier %s: %w", name, err)
		}
		t.Objectives = append(t.Objectives, o)
	}
	return t, nil
}

// parseObjective reads METRIC.pQ>=BOUND or METRIC.pQ<=BOUND.
func parseObjective(item string) (TierObjective, error) {
	text := strings.TrimSpace(item)
	m := objectiveRE.FindStringSubmatch(text)
	if m == nil {
		return TierObjective{}, fmt.Errorf("%q is not METRIC.pQ>=BOUND or METRIC.pQ<=BOUND (%s)", text, tierExample)
	}
	o := TierObjective{Text: text, Metric: strings.ToLower(m[1]), Bound: strings.TrimSpace(m[4])}
	switch m[3] {
	case ">=", "=>":
		o.AtLeast = true
	case "<=", "=<":
	default:
		return TierObjective{}, fmt.Errorf("%q: the bound is >= (at least) or <= (at most), not %s", text, m[3])
	}
	stat := strings.ToLower(m[2])
	q, err := strconv.ParseFloat(strings.TrimPrefix(stat, "p"), 64)
	if !strings.HasPrefix(stat, "p") || err != nil || !(q > 0 && q <= 100) || math.IsNaN(q) {
		return TierObjective{}, fmt.Errorf("%q: %q is not a percentile: give p1 … p100, e.g. %s.p90", text, m[2], o.Metric)
	}
	o.Percentile = q
	if o.Bound == "" {
		return TierObjective{}, fmt.Errorf("%q has no bound after %s", text, m[3])
	}
	return o, nil
}

// tiers decodes the top-level tiers: mapping, NAME: "objectives", in the order written.
func (l *loader) tiers(e entry) ([]Tier, *Error) {
	es, err := l.entries(e.value, "tiers", 0)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, l.errValue(e, "tiers is empty: give NAME: \"OBJECTIVES\", %s", tierExample)
	}
	if len(es) > MaxTiers {
		return nil, l.errNode(es[MaxTiers].keyNode, "at most %d tiers", MaxTiers)
	}
	var out []Tier
	for _, te := range es {
		s, ok, err := l.str(te)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, l.errValue(te, "tier %s needs its objectives as a string, %s", te.key, tierExample)
		}
		t, perr := ParseTier(te.key, s)
		if perr != nil {
			return nil, l.errValue(te, "tiers: %v", perr)
		}
		l.placeObjectives(te.value, s, t.Objectives)
		out = append(out, t)
	}
	return out, nil
}

// placeObjectives records where each objective of a tier's string was written: the string's
// place plus the objective's offset in it (past the opening quote of a quoted string).
func (l *loader) placeObjectives(n ast.Node, s string, objs []TierObjective) {
	r, err := l.resolve(n)
	if err != nil || isNull(r) {
		return
	}
	line, col := posOf(r)
	if tk := r.GetToken(); tk != nil && (tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType) {
		col++
	}
	off := 0
	for i, item := range strings.Split(s, ",") {
		lead := len([]rune(item)) - len([]rune(strings.TrimLeft(item, " \t")))
		o := &objs[i]
		o.File, o.Line, o.Col = l.file, line, col+off+lead
		o.Snippet = snippet(l.lines, line, o.Col, l.secrets)
		off += len([]rune(item)) + 1
	}
}
