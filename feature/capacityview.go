package feature

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"tokscope/sweep"
)

// The live view of a capacity search (--find-max), the Sweep view's while a search runs: a
// line per endpoint with where its search stands (its bracket, the step being measured, the
// answer once found), then the selected endpoint's steps in the order run, each with its
// attainment drawn as a bar against the target and its goodput. With tiers, the tier ladder
// instead: a row per tier and a column per endpoint, filling in as the steps run (a bracket
// while searched, the boundary once confirmed, ✓), then the selected endpoint's steps, each
// with every tier's verdict on it (✓ met, ✗ missed, ~ within noise: measured again, · not
// judged: outside the tier's bracket). Package ui draws the lines (fitted to its width and h
// rows); marker names an endpoint's mark in the view, cutName cuts a name to n columns in its
// middle.

// Search is what the view reads of a sweep.Search (an interface so that tests can script
// one).
type Search interface {
	Plan() sweep.SearchPlan
	Outcomes() []sweep.Outcome
	Current(ep int) (load float64, start time.Time, finished int, ok bool)
}

// capacityBarW is the width of an attainment bar.
const capacityBarW = 20

// SearchView is the view of search over the endpoints named names in h rows; sel is the
// selected endpoint, now the clock.
func SearchView(search Search, names []string, sel int, now time.Time, h int, marker func(int) rune, cutName func(string, int) string) []Form {
	plan := search.Plan()
	if len(plan.Tiers) > 0 {
		return tierView(search, names, sel, now, h, marker, cutName)
	}
	outs := search.Outcomes()
	lines := []Form{{{Role: Title, Text: "find-max " + plan.By}, {Role: Plain, Text: " "}, {Role: Muted, Text: fmt.Sprintf("target %s · steps ≥ %s and %d requests · limit %s",
		pctText(plan.Target), plan.StepDuration, sweep.MinStepRequests, LoadText(plan.Limit))}}}
	for i := range outs {
		if i >= len(names) {
			break
		}
		lines = append(lines, Form{{Role: Value, Text: string(marker(i)) + " " + names[i]}, {Role: Plain, Text: "  "}, searchState(search, plan.By, i, &outs[i], now)})
	}
	if len(outs) == 0 || len(names) == 0 {
		return lines
	}
	sel = max(0, min(sel, min(len(outs), len(names))-1))
	lines = append(lines, nil, Form{{Role: Title, Text: string(marker(sel)) + " " + names[sel]}, {Role: Muted, Text: "  ←/→ endpoint"}})
	lines = append(lines, Form{{Role: Muted, Text: fmt.Sprintf("%7s %5s %7s %-*s %8s  %s", loadHead(plan.By), "req", "SLO met", capacityBarW+2, "", "good/s", "verdict")}})
	rows := searchRows(&outs[sel], plan.Target)
	if room := h - len(lines); len(rows) > room && room > 0 {
		rows = rows[len(rows)-room:] // the latest steps
	}
	return append(lines, rows...)
}

// searchState is one endpoint's state in a few words.
func searchState(search Search, by string, ep int, o *sweep.Outcome, now time.Time) Span {
	switch {
	case o.Done && o.Max == 0:
		return Span{Role: Bad, Text: fmt.Sprintf("missed even at %s %s (%s)", by, LoadText(o.FirstMiss), pctText(o.AttainmentAtMiss))}
	case o.Done:
		text := fmt.Sprintf("max %s %s (SLO met by %s)", by, LoadText(o.Max), pctText(o.AttainmentAtMax))
		if o.FirstMiss > 0 {
			text += fmt.Sprintf(", %s missed (%s)", LoadText(o.FirstMiss), pctText(o.AttainmentAtMiss))
		} else {
			text += ", the limit"
		}
		return Span{Role: Good, Text: text}
	}
	var parts []string
	if o.FirstMiss > 0 {
		parts = append(parts, "bracket ["+LoadText(o.Max)+", "+LoadText(o.FirstMiss)+"]")
	} else if o.Max > 0 {
		parts = append(parts, "met up to "+LoadText(o.Max))
	}
	if load, start, finished, ok := search.Current(ep); ok {
		parts = append(parts, fmt.Sprintf("measuring %s: %s, %d requests", LoadText(load), now.Sub(start).Round(100*time.Millisecond), finished))
	} else if len(o.Steps) == 0 {
		parts = append(parts, "waiting for the warm-ups")
	}
	return Span{Role: Muted, Text: strings.Join(parts, " · ")}
}

// searchRows are the steps of one endpoint's search, in the order run.
func searchRows(o *sweep.Outcome, target float64) []Form {
	var rows []Form
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
		role := Good
		switch m.Verdict {
		case sweep.Missed:
			role = Bad
		case sweep.Pending:
			role = Warn
		}
		rows = append(rows, Form{{Role: Plain, Text: fmt.Sprintf("%7s %5d %7s %s %8s  ", LoadText(m.Load), m.Requests, att,
			attainmentBar(m.Attainment, target, m.Requests > 0), strconv.FormatFloat(m.GoodputRPS, 'f', 1, 64))}, {Role: role, Text: verdict}})
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

// LoadText is a search's load as the view and the progress lines write it: 4, 2.5.
func LoadText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// pctText is whole percents rounded down (a miss at 89.7 % against 90 % never reads "90 %").
func pctText(f float64) string { return strconv.FormatFloat(math.Floor(100*f+1e-9), 'f', 0, 64) + " %" }

// tierCellW is the width of a ladder cell.
const tierCellW = 18

// tierView is the view of a tier search (SearchView's arguments).
func tierView(search Search, names []string, sel int, now time.Time, h int, marker func(int) rune, cutName func(string, int) string) []Form {
	plan := search.Plan()
	outs := search.Outcomes()
	n := min(len(outs), len(names))
	lines := []Form{{{Role: Title, Text: "find-max " + plan.By}, {Role: Plain, Text: " "}, {Role: Muted, Text: fmt.Sprintf("%d tiers · steps ≥ %s and %d requests · limit %s",
		len(plan.Tiers), plan.StepDuration, sweep.MinStepRequests, LoadText(plan.Limit))}}}
	head := fmt.Sprintf("%-10s", "tier")
	for i := range n {
		head += " " + fmt.Sprintf("%-*s", tierCellW, cutName(string(marker(i))+" "+names[i], tierCellW))
	}
	lines = append(lines, Form{{Role: Muted, Text: head}})
	for k, t := range plan.Tiers {
		row := Form{{Role: Value, Text: fmt.Sprintf("%-10s", cutName(t.Name, 10))}}
		for i := range n {
			row = append(row, Span{Role: Plain, Text: " "}, tierCell(&outs[i], k, cutName))
		}
		lines = append(lines, row)
	}
	for i := range n {
		if load, start, finished, ok := search.Current(i); ok {
			lines = append(lines, Form{{Role: Muted, Fit: true, Text: fmt.Sprintf("%c measuring %s %s: %s, %d requests", marker(i), plan.By, LoadText(load), now.Sub(start).Round(100*time.Millisecond), finished)}})
		}
	}
	if n == 0 {
		return lines
	}
	sel = max(0, min(sel, n-1))
	lines = append(lines, nil, Form{{Role: Title, Text: string(marker(sel)) + " " + names[sel]}, {Role: Muted, Text: "  ←/→ endpoint   ✓ met  ✗ missed  ~ re-measure  · not judged  c confirming"}})
	head = fmt.Sprintf("%7s %5s %9s", loadHead(plan.By), "req", "out tok/s")
	for _, t := range plan.Tiers {
		head += " " + fmt.Sprintf("%-6s", cutName(t.Name, 6))
	}
	lines = append(lines, Form{{Role: Muted, Text: head}})
	rows := tierRows(&plan, &outs[sel])
	if room := h - len(lines); len(rows) > room && room > 0 {
		rows = rows[len(rows)-room:] // the latest steps
	}
	return append(lines, rows...)
}

// tierCell is tier k's state on one endpoint, tierCellW wide.
func tierCell(o *sweep.Outcome, k int, cutName func(string, int) string) Span {
	if k >= len(o.Tiers) {
		return Span{Role: Plain, Text: fmt.Sprintf("%-*s", tierCellW, "")}
	}
	t := o.Tiers[k]
	hi := "…"
	if t.FirstMiss > 0 {
		hi = LoadText(t.FirstMiss)
	}
	var text string
	role := Muted
	switch {
	case t.Done && t.Confirmed:
		text, role = LoadText(t.Boundary)+" ✓", Good
		if t.FirstMiss > 0 {
			text += " (" + hi + " ✗)"
		}
	case t.Done:
		text, role = "✗ at "+hi, Bad
	case t.FirstMiss == 0 && t.Boundary == 0:
		text = "…"
	default:
		text = "[" + LoadText(t.Boundary) + ", " + hi + "]"
	}
	return Span{Role: role, Text: fmt.Sprintf("%-*s", tierCellW, cutName(text, tierCellW))}
}

// tierRows are one endpoint's steps with every tier's verdict.
func tierRows(plan *sweep.SearchPlan, o *sweep.Outcome) []Form {
	var rows []Form
	for i := range o.Steps {
		m := &o.Steps[i]
		row := Form{{Role: Plain, Text: fmt.Sprintf("%7s %5d %9.1f", LoadText(m.Load), m.Requests, m.OutputTPS)}}
		for k := range plan.Tiers {
			mark, role := "·", Muted
			if k < len(m.Tiers) && m.Tiers[k].Judged {
				switch m.Tiers[k].Verdict {
				case sweep.Met:
					mark, role = "✓", Good
				case sweep.Missed:
					mark, role = "✗", Bad
				default:
					mark, role = "~", Warn
				}
				if m.Tiers[k].Confirming {
					mark += "c"
				}
			}
			row = append(row, Span{Role: Plain, Text: " "}, Span{Role: role, Text: fmt.Sprintf("%-6s", mark)})
		}
		rows = append(rows, row)
	}
	return rows
}
