package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/sweep"
)

// The sweep view of a capacity search (--find-max): a line per endpoint with where its search
// stands (its bracket, the step being measured, the answer once found), then the selected
// endpoint's steps in the order run, each with its attainment drawn as a bar against the
// target and its goodput.

// capacitySearch is what the view reads of a sweep.Search (an interface so that tests can
// script one).
type capacitySearch interface {
	Plan() sweep.SearchPlan
	Outcomes() []sweep.Outcome
	Current(ep int) (load float64, start time.Time, finished int, ok bool)
	Version() uint64
}

// capacityBarW is the width of an attainment bar.
const capacityBarW = 20

// renderSearch draws search over the endpoints named names into w×h; sel is the selected
// endpoint, now the clock.
func renderSearch(s *Styles, search capacitySearch, names []string, sel int, now time.Time, w, h int) string {
	plan := search.Plan()
	if len(plan.Tiers) > 0 {
		return renderTiers(s, search, names, sel, now, w, h)
	}
	outs := search.Outcomes()
	lines := []string{s.Title.Render("find-max "+plan.By) + " " + s.Muted.Render(fmt.Sprintf("target %s · steps ≥ %s and %d requests · limit %s",
		pctText(plan.Target), plan.StepDuration, sweep.MinStepRequests, loadText(plan.Limit)))}
	for i := range outs {
		if i >= len(names) {
			break
		}
		lines = append(lines, truncate(s.Value.Render(string(sweepMarker(i))+" "+names[i])+"  "+searchState(s, search, plan.By, i, &outs[i], now), w))
	}
	if len(outs) == 0 || len(names) == 0 {
		return fit(strings.Join(lines, "\n"), w, h)
	}
	sel = clamp(sel, 0, min(len(outs), len(names))-1)
	lines = append(lines, "", s.Title.Render(string(sweepMarker(sel))+" "+names[sel])+s.Muted.Render("  ←/→ endpoint"))
	lines = append(lines, s.Muted.Render(fmt.Sprintf("%7s %5s %7s %-*s %8s  %s", loadHead(plan.By), "req", "SLO met", capacityBarW+2, "", "good/s", "verdict")))
	rows := searchRows(s, &outs[sel], plan.Target)
	if room := h - len(lines); len(rows) > room && room > 0 {
		rows = rows[len(rows)-room:] // the latest steps
	}
	lines = append(lines, rows...)
	return fit(strings.Join(lines, "\n"), w, h)
}

// searchState is one endpoint's state in a few words.
func searchState(s *Styles, search capacitySearch, by string, ep int, o *sweep.Outcome, now time.Time) string {
	switch {
	case o.Done && o.Max == 0:
		return s.Bad.Render(fmt.Sprintf("missed even at %s %s (%s)", by, loadText(o.FirstMiss), pctText(o.AttainmentAtMiss)))
	case o.Done:
		text := fmt.Sprintf("max %s %s (SLO met by %s)", by, loadText(o.Max), pctText(o.AttainmentAtMax))
		if o.FirstMiss > 0 {
			text += fmt.Sprintf(", %s missed (%s)", loadText(o.FirstMiss), pctText(o.AttainmentAtMiss))
		} else {
			text += ", the limit"
		}
		return s.Good.Render(text)
	}
	var parts []string
	if o.FirstMiss > 0 {
		parts = append(parts, "bracket ["+loadText(o.Max)+", "+loadText(o.FirstMiss)+"]")
	} else if o.Max > 0 {
		parts = append(parts, "met up to "+loadText(o.Max))
	}
	if load, start, finished, ok := search.Current(ep); ok {
		parts = append(parts, fmt.Sprintf("measuring %s: %s, %d requests", loadText(load), now.Sub(start).Round(100*time.Millisecond), finished))
	} else if len(o.Steps) == 0 {
		parts = append(parts, "waiting for the warm-ups")
	}
	return s.Muted.Render(strings.Join(parts, " · "))
}

// searchRows are the steps of one endpoint's search, in the order run.
func searchRows(s *Styles, o *sweep.Outcome, target float64) []string {
	var rows []string
	for i := range o.Steps {
		m := &o.Steps[i]
		att := "—"
		if m.Requests > 0 {
			att = strconv.FormatFloat(100*m.Attainment, 'f', 1, 64)
		}
		verdict := map[sweep.Verdict]string{sweep.Pending: "re-measure", sweep.Met: "met", sweep.Missed: "missed"}[m.Verdict]
		if m.Remeasured {
			verdict += " (re-measured)"
		}
		style := s.Good
		switch m.Verdict {
		case sweep.Missed:
			style = s.Bad
		case sweep.Pending:
			style = s.Warn
		}
		rows = append(rows, fmt.Sprintf("%7s %5d %7s %s %8s  %s", loadText(m.Load), m.Requests, att,
			attainmentBar(m.Attainment, target, m.Requests > 0), strconv.FormatFloat(m.GoodputRPS, 'f', 1, 64), style.Render(verdict)))
	}
	return rows
}

// attainmentBar is attainment a as a bar of capacityBarW cells, the target marked with │.
func attainmentBar(a, target float64, ok bool) string {
	cells := []rune(strings.Repeat(" ", capacityBarW))
	if ok {
		for i := range int(a*capacityBarW + 0.5) {
			cells[min(i, capacityBarW-1)] = '█'
		}
	}
	t := min(int(target*capacityBarW+0.5), capacityBarW-1)
	if cells[t] == ' ' {
		cells[t] = '│'
	} else {
		cells[t] = '┃'
	}
	return "[" + string(cells) + "]"
}

func loadHead(by string) string {
	switch by {
	case sweep.ByRate:
		return "req/s"
	case sweep.ByUsers:
		return "users"
	}
	return "conc"
}

func loadText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// pctText is whole percents rounded down (a miss at 89.7 % against 90 % never reads "90 %").
func pctText(f float64) string { return strconv.FormatFloat(math.Floor(100*f+1e-9), 'f', 0, 64) + " %" }
