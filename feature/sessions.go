package feature

import (
	"strconv"

	"tokscope/stats"
)

// Agent sessions (--sessions): per endpoint "sessions", after "turns", only in session runs.
// Hit rates are fractions 0–1 (null when unknown); durations ms; distributions as elsewhere
// ({p50, p90, p99, mean, min, max}, null without data).

// sessionsFeature: "sessions" and its columns in session runs, the table's sessions line.
func sessionsFeature() Feature {
	return Feature{
		Name:   "sessions",
		JSONAt: JSONTail,
		JSON: func(e *stats.EndpointStats) []Member {
			if j := sessionsJSON(e); j != nil {
				return []Member{{"sessions", j}}
			}
			return nil
		},
		CSVHeader: func(snap *stats.Snapshot) []string {
			if !AnyEndpoint(snap, hasSessions) {
				return nil
			}
			return sessionsCSVHeader()
		},
		CSV: func(snap *stats.Snapshot, e *stats.EndpointStats) []string {
			if !AnyEndpoint(snap, hasSessions) {
				return nil
			}
			return sessionsCSV(e)
		},
		LinesAt: LinesMid,
		Lines:   func(_ *stats.Snapshot, e *stats.EndpointStats) []string { return Line(sessionsLine(e)) },
	}
}

func hasSessions(e *stats.EndpointStats) bool { return e.Sessions != nil }

type jsonSessions struct {
	Turns         int     `json:"turns"`
	IdealHitRate  *Number `json:"ideal_hit_rate"`
	ServedHitRate *Number `json:"served_hit_rate"`
	Efficiency    *Number `json:"cache_efficiency"`
	Overflow      int     `json:"overflow_turns"`
	Invalid       bool    `json:"invalid"`
	Completed     int     `json:"completed"`
	PerMinute     *Number `json:"completed_per_min"`
	Duration      *Dist   `json:"duration_ms"`
	Model         *Dist   `json:"model_ms"`
	Tool          *Dist   `json:"tool_ms"`
	TurnsPer      *Dist   `json:"turns_per_session"`
	OutputTPS     *Dist   `json:"output_tps_of_model_time"`
	FirstTTFT     *Dist   `json:"first_turn_ttft_ms"`
	LaterTTFT     *Dist   `json:"later_turn_ttft_ms"`
}

func numPtr(v *float64) *Number {
	if v == nil {
		return nil
	}
	n := Number(*v)
	return &n
}

func sessionsJSON(e *stats.EndpointStats) *jsonSessions {
	s := e.Sessions
	if s == nil {
		return nil
	}
	return &jsonSessions{Turns: s.Turns, IdealHitRate: numPtr(s.IdealHitRate), ServedHitRate: numPtr(s.ServedHitRate),
		Efficiency: numPtr(s.Efficiency), Overflow: s.Overflow, Invalid: s.Invalid, Completed: s.Completed,
		PerMinute: numPtr(s.PerMinute), Duration: ToDist(s.Duration), Model: ToDist(s.Model),
		Tool: ToDist(s.Tool), TurnsPer: ToDist(s.TurnsPer), OutputTPS: ToDist(s.OutputTPS),
		FirstTTFT: ToDist(s.FirstTTFT), LaterTTFT: ToDist(s.LaterTTFT)}
}

// sessionsLine is the summary table's line for an endpoint's sessions; "" outside them.
func sessionsLine(e *stats.EndpointStats) string {
	s := e.Sessions
	if s == nil {
		return ""
	}
	pct := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return Percent(*v)
	}
	line := "sessions " + strconv.Itoa(s.Completed) + " completed of " + strconv.Itoa(s.Turns) + " turns" +
		"  cache hit ideal " + pct(s.IdealHitRate) + "  served " + pct(s.ServedHitRate) + "  efficiency " + pct(s.Efficiency)
	if s.Overflow > 0 {
		line += "  overflowed " + strconv.Itoa(s.Overflow) + " turns"
	}
	if s.Invalid {
		line += "  INVALID: more than 1 % of turns overflowed the context"
	}
	return line
}

// anySessions reports whether an endpoint of snap replayed sessions (the CSV then has their
// columns, last).
// sessionsCSVDists are the session distributions in the CSV, by column prefix.
var sessionsCSVDists = []string{"sessions_duration_ms", "sessions_model_ms", "sessions_tool_ms", "sessions_turns",
	"sessions_output_tps", "sessions_first_turn_ttft_ms", "sessions_later_turn_ttft_ms"}

// sessionsCSVHeader: the scalars, then each distribution's TableColumns.
func sessionsCSVHeader() []string {
	h := []string{"sessions_turns_total", "sessions_ideal_hit_rate", "sessions_served_hit_rate", "sessions_cache_efficiency",
		"sessions_overflow_turns", "sessions_invalid", "sessions_completed", "sessions_completed_per_min"}
	for _, p := range sessionsCSVDists {
		for _, c := range TableColumns {
			h = append(h, p+"_"+c)
		}
	}
	return h
}

// sessionsCSV is an endpoint's session cells; empty cells where it has none or no data.
func sessionsCSV(e *stats.EndpointStats) []string {
	s := e.Sessions
	if s == nil {
		return make([]string, len(sessionsCSVHeader()))
	}
	opt := func(v *float64) string {
		if v == nil {
			return ""
		}
		return FormatNumber(*v)
	}
	row := []string{strconv.Itoa(s.Turns), opt(s.IdealHitRate), opt(s.ServedHitRate), opt(s.Efficiency),
		strconv.Itoa(s.Overflow), strconv.FormatBool(s.Invalid), strconv.Itoa(s.Completed), opt(s.PerMinute)}
	for _, d := range []stats.Dist{s.Duration, s.Model, s.Tool, s.TurnsPer, s.OutputTPS, s.FirstTTFT, s.LaterTTFT} {
		row = append(row, DistCells(d)...)
	}
	return row
}
