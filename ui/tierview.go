package ui

import (
	"fmt"
	"strings"
	"time"

	"tokscope/sweep"
)

// The sweep view of a tier search (--find-max with --tier): the tier ladder, a row per tier
// and a column per endpoint, filling in as the steps run (a bracket while searched, the
// boundary once confirmed, ✓), then the selected endpoint's steps, each with every tier's
// verdict on it (✓ met, ✗ missed, ~ within noise: measured again, · not judged: outside the
// tier's bracket).

// tierCellW is the width of a ladder cell.
const tierCellW = 18

// renderTiers draws a tier search into w×h (renderSearch's arguments).
func renderTiers(s *Styles, search capacitySearch, names []string, sel int, now time.Time, w, h int) string {
	plan := search.Plan()
	outs := search.Outcomes()
	n := min(len(outs), len(names))
	lines := []string{s.Title.Render("find-max "+plan.By) + " " + s.Muted.Render(fmt.Sprintf("%d tiers · steps ≥ %s and %d requests · limit %s",
		len(plan.Tiers), plan.StepDuration, sweep.MinStepRequests, loadText(plan.Limit)))}
	head := fmt.Sprintf("%-10s", "tier")
	for i := range n {
		head += " " + fmt.Sprintf("%-*s", tierCellW, truncateName(string(sweepMarker(i))+" "+names[i], tierCellW))
	}
	lines = append(lines, s.Muted.Render(head))
	for k, t := range plan.Tiers {
		row := s.Value.Render(fmt.Sprintf("%-10s", truncateName(t.Name, 10)))
		for i := range n {
			row += " " + tierCell(s, &outs[i], k)
		}
		lines = append(lines, truncate(row, w))
	}
	for i := range n {
		if load, start, finished, ok := search.Current(i); ok {
			lines = append(lines, s.Muted.Render(truncate(fmt.Sprintf("%c measuring %s %s: %s, %d requests", sweepMarker(i), plan.By, loadText(load), now.Sub(start).Round(100*time.Millisecond), finished), w)))
		}
	}
	if n == 0 {
		return fit(strings.Join(lines, "\n"), w, h)
	}
	sel = clamp(sel, 0, n-1)
	lines = append(lines, "", s.Title.Render(string(sweepMarker(sel))+" "+names[sel])+s.Muted.Render("  ←/→ endpoint   ✓ met  ✗ missed  ~ re-measure  · not judged  c confirming"))
	head = fmt.Sprintf("%7s %5s %9s", loadHead(plan.By), "req", "out tok/s")
	for _, t := range plan.Tiers {
		head += " " + fmt.Sprintf("%-6s", truncateName(t.Name, 6))
	}
	lines = append(lines, s.Muted.Render(head))
	rows := tierRows(s, &plan, &outs[sel])
	if room := h - len(lines); len(rows) > room && room > 0 {
		rows = rows[len(rows)-room:] // the latest steps
	}
	lines = append(lines, rows...)
	return fit(strings.Join(lines, "\n"), w, h)
}

// tierCell is tier k's state on one endpoint, tierCellW wide.
func tierCell(s *Styles, o *sweep.Outcome, k int) string {
	if k >= len(o.Tiers) {
		return fmt.Sprintf("%-*s", tierCellW, "")
	}
	t := o.Tiers[k]
	hi := "…"
	if t.FirstMiss > 0 {
		hi = loadText(t.FirstMiss)
	}
	var text string
	style := s.Muted
	switch {
	case t.Done && t.Confirmed:
		text, style = loadText(t.Boundary)+" ✓", s.Good
		if t.FirstMiss > 0 {
			text += " (" + hi + " ✗)"
		}
	case t.Done:
		text, style = "✗ at "+hi, s.Bad
	case t.FirstMiss == 0 && t.Boundary == 0:
		text = "…"
	default:
		text = "[" + loadText(t.Boundary) + ", " + hi + "]"
	}
	return style.Render(fmt.Sprintf("%-*s", tierCellW, truncateName(text, tierCellW)))
}

// tierRows are one endpoint's steps with every tier's verdict.
func tierRows(s *Styles, plan *sweep.SearchPlan, o *sweep.Outcome) []string {
	var rows []string
	for i := range o.Steps {
		m := &o.Steps[i]
		row := fmt.Sprintf("%7s %5d %9.1f", loadText(m.Load), m.Requests, m.OutputTPS)
		for k := range plan.Tiers {
			mark, style := "·", s.Muted
			if k < len(m.Tiers) && m.Tiers[k].Judged {
				switch m.Tiers[k].Verdict {
				case sweep.Met:
					mark, style = "✓", s.Good
				case sweep.Missed:
					mark, style = "✗", s.Bad
				default:
					mark, style = "~", s.Warn
				}
				if m.Tiers[k].Confirming {
					mark += "c"
				}
			}
			row += " " + style.Render(fmt.Sprintf("%-6s", mark))
		}
		rows = append(rows, row)
	}
	return rows
}
