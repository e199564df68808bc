package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/stats"
)

// The Lanes view (agent sessions, --sessions): one row per lane of the selected endpoint
// (a loop of -n), time flowing left to right up to now; each turn from its t0 to its first
// token in ░ (wait and prefill), then to its end in █ (decode), a turn in flight up to now,
// a failed turn, or one that missed the endpoint's objectives, in the error colour; a sub-agent's turns on a row of its own under its lane
// (├ its lane and depth), so that it forks and joins in plain sight; blanks are tool and
// think time. A strip under the rows counts the endpoint's session turns in flight per
// column. It is in the header and the Tab cycle once a session turn was seen.

// lanesWindow is the time the rows span.
const lanesWindow = 60 * time.Second

// laneBar is one turn as drawn.
type laneBar struct {
	start, first, end time.Time // first zero before (or without) a first token, end zero in flight
	failed            bool
}

// laneRow is the turns of one lane (depth 0) or of a lane's sub-agents at one depth.
type laneRow struct {
	lane, depth int
	bars        []laneBar
}

type lanesView struct {
	common
	names  []string
	slos   []config.SLO          // by endpoint: a turn that misses its objectives is drawn as a failure
	rows   []map[[2]int]*laneRow // by endpoint, by {lane, depth}
	flying []map[uint64]*laneBar // by endpoint, by Seq: turns in flight
	where  []map[uint64][2]int   // by endpoint, by Seq: their row
	last   []string              // by endpoint: the breakdown of its last finished turn
	seen   bool
}

func newLanesView(c common, eps []config.Endpoint) *lanesView {
	v := &lanesView{common: c}
	for _, ep := range eps {
		v.names, v.slos = append(v.names, ep.Name), append(v.slos, ep.SLO)
		v.rows = append(v.rows, map[[2]int]*laneRow{})
		v.flying = append(v.flying, map[uint64]*laneBar{})
		v.where = append(v.where, map[uint64][2]int{})
		v.last = append(v.last, "")
	}
	return v
}

func (v *lanesView) Name() string { return "Lanes" }

// InTabs: only once a session's turn was seen.
func (v *lanesView) InTabs() bool { return v.seen }

func (v *lanesView) Info() string { return "" }

func (v *lanesView) ShortHelp() []key.Binding {
	k := v.keys
	return []key.Binding{k.Help, k.NextView, k.Left, k.Right, k.Pause, k.Quit}
}

// Observe takes the session turns' Started, Progress and Done; it never claims an event
// (the model goes on counting it).
func (v *lanesView) Observe(ev sample.Event) bool {
	switch e := ev.(type) {
	case *sample.Started:
		if e.Session != nil && e.Endpoint.In(len(v.rows)) && e.Session.Lane > 0 {
			v.seen = true
			ep := int(e.Endpoint)
			v.flying[ep][e.Seq] = &laneBar{start: e.At}
			v.where[ep][e.Seq] = [2]int{e.Session.Lane, e.Session.Depth}
		}
	case *sample.Progress:
		if e.Endpoint.In(len(v.rows)) {
			if b := v.flying[int(e.Endpoint)][e.Seq]; b != nil && b.first.IsZero() && e.FirstToken > 0 {
				b.first = e.Start.Add(e.FirstToken)
			}
		}
	case *sample.Done:
		v.done(e)
	}
	return false
}

func (v *lanesView) done(e *sample.Done) {
	s := &e.Sample
	if s.Session == nil || s.Session.Lane <= 0 || !e.Endpoint.In(len(v.rows)) || s.Warmup {
		return
	}
	ep := int(e.Endpoint)
	delete(v.flying[ep], s.Seq)
	delete(v.where[ep], s.Seq)
	v.seen = true
	counted, good := stats.MeetsSLO(v.slos[ep], s, sample.TTFTFirstToken)
	b := laneBar{start: s.Start, end: s.Start.Add(max(s.End, 0)), failed: s.Outcome != sample.OutcomeOK || counted && !good}
	if s.FirstToken > 0 {
		b.first = s.Start.Add(s.FirstToken)
	}
	key := [2]int{s.Session.Lane, s.Session.Depth}
	r := v.rows[ep][key]
	if r == nil {
		r = &laneRow{lane: key[0], depth: key[1]}
		v.rows[ep][key] = r
	}
	v.last[ep] = turnBreakdown(s)
	r.bars = append(r.bars, b)
	if len(r.bars) > 512 { // older than any window drawn
		r.bars = r.bars[len(r.bars)-256:]
	}
}

// Render draws the selected endpoint's lanes over the last lanesWindow.
func (v *lanesView) Render(f *frame) string {
	if f.sel < 0 || f.sel >= len(v.rows) {
		return fit("", v.w, v.h)
	}
	ep := f.sel
	rows := v.sortedRows(ep)
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", v.styles.Title.Render("Lanes: "+v.names[ep]), v.styles.Muted.Render(v.summary(f, ep)))
	if len(rows) == 0 {
		b.WriteString(v.styles.Muted.Render("no agent session here: --sessions FILE replays one per lane (-n)"))
		return fit(b.String(), v.w, v.h)
	}
	const label = 7
	width := max(v.w-label, 10)
	from := f.now.Add(-lanesWindow)
	col := func(t time.Time) int { return int(float64(t.Sub(from)) / float64(lanesWindow) * float64(width)) }
	for _, r := range rows {
		name := fmt.Sprintf("%3d   ", r.lane)
		if r.depth > 0 {
			name = fmt.Sprintf("%3d├%d ", r.lane, r.depth)
		}
		b.WriteString(v.styles.Label.Render(name) + v.strip(r.bars, width, col, f.now) + "\n")
	}
	b.WriteString(v.styles.Label.Render("flight ") + v.inFlight(ep, rows, width, col, f.now) + "\n")
	b.WriteString(v.styles.Muted.Render(fmt.Sprintf("%*s%s", label, "", axisText(width))) + "\n")
	for i, l := range strings.Split(v.last[ep], "\n") {
		if l == "" {
			continue
		}
		head := "          "
		if i == 0 {
			head = "last turn "
		}
		b.WriteString(v.styles.Label.Render(head) + l + "\n")
	}
	return fit(b.String(), v.w, v.h)
}

// sortedRows are the endpoint's rows, the turns in flight included, by lane then depth.
func (v *lanesView) sortedRows(ep int) []*laneRow {
	byKey := map[[2]int]*laneRow{}
	for k, r := range v.rows[ep] {
		cp := *r
		byKey[k] = &cp
	}
	for seq, b := range v.flying[ep] {
		k := v.where[ep][seq]
		r := byKey[k]
		if r == nil {
			r = &laneRow{lane: k[0], depth: k[1]}
			byKey[k] = r
		}
		r.bars = append(append([]laneBar(nil), r.bars...), *b)
	}
	out := make([]*laneRow, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, r)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && (out[j].lane < out[j-1].lane || out[j].lane == out[j-1].lane && out[j].depth < out[j-1].depth); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// strip draws one row's bars into width columns.
func (v *lanesView) strip(bars []laneBar, width int, col func(time.Time) int, now time.Time) string {
	cells := make([]rune, width)
	bad := make([]bool, width)
	for i := range cells {
		cells[i] = ' '
	}
	for _, bar := range bars {
		end := bar.end
		if end.IsZero() {
			end = now
		}
		first := bar.first
		if first.IsZero() || first.After(end) {
			first = end
		}
		for c := max(col(bar.start), 0); c <= min(col(end), width-1); c++ {
			cells[c] = '░'
			if c >= col(first) {
				cells[c] = '█'
			}
			bad[c] = bar.failed
		}
	}
	var b strings.Builder
	for i, r := range cells {
		switch {
		case bad[i]:
			b.WriteString(v.styles.Bad.Render(string(r)))
		case r == '█':
			b.WriteString(v.styles.SparkDecode.Render(string(r)))
		case r == '░':
			b.WriteString(v.styles.SparkTTFT.Render(string(r)))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// inFlight counts, per column, the endpoint's session turns in flight at the column's time.
func (v *lanesView) inFlight(ep int, rows []*laneRow, width int, col func(time.Time) int, now time.Time) string {
	counts := make([]int, width)
	for _, r := range rows {
		for _, bar := range r.bars {
			end := bar.end
			if end.IsZero() {
				end = now
			}
			for c := max(col(bar.start), 0); c <= min(col(end), width-1); c++ {
				counts[c]++
			}
		}
	}
	levels := []rune(" ▁▂▃▄▅▆▇█")
	most := 1
	for _, n := range counts {
		most = max(most, n)
	}
	var b strings.Builder
	for _, n := range counts {
		b.WriteRune(levels[(n*(len(levels)-1)+most-1)/most])
	}
	return v.styles.Muted.Render(b.String())
}

// summary is the header's figures: the ideal and served cache hits and the sessions done.
func (v *lanesView) summary(f *frame, ep int) string {
	if f.snap == nil || ep >= len(f.snap.Endpoints) || f.snap.Endpoints[ep].Sessions == nil {
		return ""
	}
	s := f.snap.Endpoints[ep].Sessions
	pct := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.1f%%", *p*100)
	}
	return fmt.Sprintf("cache hit ideal %s  served %s  ·  %d sessions done, %d turns  ·  ░ to first token  █ decode  blank: tool time",
		pct(s.IdealHitRate), pct(s.ServedHitRate), s.Completed, s.Turns)
}

// axisText marks the window's start and now.
func axisText(width int) string {
	left := fmt.Sprintf("-%ds", int(lanesWindow.Seconds()))
	return left + strings.Repeat(" ", max(width-len(left)-3, 1)) + "now"
}

// turnBreakdown is a finished turn's figures: where it ran, the gap before it, its time to
// the first token and its decode, its tokens, and the cache: blocks, ideal and served.
func turnBreakdown(s *sample.Sample) string {
	st := s.Session
	where := fmt.Sprintf("lane %d", st.Lane)
	if st.Depth > 0 {
		where += fmt.Sprintf(" sub-agent %d (depth %d)", st.ID, st.Depth)
	}
	out := fmt.Sprintf("%s turn %d · gap %s", where, st.Turn, fmtDur(st.Gap))
	if s.Outcome != sample.OutcomeOK {
		return out + " · " + string(s.Outcome) + " " + s.ErrorKind
	}
	out += "\n"
	if ttft, ok := s.TTFT(); ok {
		out += "to first token " + fmtDur(ttft) + " · decode " + fmtDur(max(s.LastToken-ttft, 0)) + " · "
	}
	out += fmt.Sprintf("%d tok out\nprompt %d (offline), %d blocks · cache ideal %d", s.Tokens, st.PromptTokens, st.Blocks, st.IdealCached)
	if s.CachedTokens >= 0 {
		out += fmt.Sprintf(" served %d", s.CachedTokens)
	}
	return out
}

// fmtDur is a duration to the millisecond, in seconds from 1 s.
func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
