package report

import (
	"html/template"
	"slices"
	"strings"
	"time"
	"tokscope/feature"

	"tokscope/export"
)

// page is what the template draws.
type page struct {
	Start, Duration, Version string
	Endpoints                []pageEndpoint
	Summary                  []summaryCard
	Columns                  []string
	TTFTFrom                 string // --ttft-from when not the default
	Sections                 []pageSection
	Settings                 []Setting
}

type pageEndpoint struct {
	Name, Model string
	Color       template.CSS
}

type summaryCard struct {
	pageEndpoint
	API   string // export.APILabel: "api anthropic", "" for chat
	Lines []string
	Rows  []feature.TableRow
}

type pageSection struct {
	ID, Title, Intro string
	Figures          []figure
	Table            *SectionTable
}

// figure is one chart on the page, or its "no data" stand-in.
type figure struct {
	ID, Title, Note, Empty string
	SVG                    template.HTML
}

func figureOf(c *chart) (figure, error) {
	f := figure{ID: c.id, Title: c.title, Note: c.note, Empty: c.empty}
	if f.Empty == "" {
		f.Empty = "no data"
	}
	svg, err := c.svg()
	f.SVG = svg
	return f, err
}

func sectionOf(id, title, intro string, charts []*chart) (pageSection, error) {
	s := pageSection{ID: id, Title: title, Intro: intro}
	for _, c := range charts {
		f, err := figureOf(c)
		if err != nil {
			return s, err
		}
		s.Figures = append(s.Figures, f)
	}
	return s, nil
}

// pageHead is the page's header: version, settings, run span, endpoints, the summary cards.
func pageHead(in *Input, eps []endpointRef) *page {
	p := &page{Version: in.Version, Settings: in.Settings, Columns: feature.TableColumns}
	if p.Version == "" {
		p.Version = "(devel)"
	}
	if in.Requests != nil {
		if start, d := in.Requests.Span(); !start.IsZero() {
			p.Start = start.Format("2006-01-02 15:04:05 MST")
			p.Duration = d.Round(100 * time.Millisecond).String()
		}
	}
	for i := range eps {
		p.Endpoints = append(p.Endpoints, pageEndpoint{Name: eps[i].name, Model: eps[i].model, Color: endpointCSS(eps[i].idx)})
	}

	// The summary, in the report's endpoint order; no base URL, which a record does not keep
	// (the settings show it).
	cells := map[string]export.TableEndpoint{}
	for _, te := range export.TableEndpoints(&in.Summary) {
		cells[te.Name] = te
	}
	for i := range eps {
		te, ok := cells[eps[i].name]
		if !ok {
			continue
		}
		p.Summary = append(p.Summary, summaryCard{pageEndpoint: p.Endpoints[i], API: export.APILabel(te.API), Lines: te.Lines, Rows: te.Rows})
	}
	if from := in.Summary.TTFTFrom; from != "" && from != "first-token" {
		p.TTFTFrom = from
	}
	return p
}

// buildPage lays the report out: the built-in sections in order, then the extension
// sections that have data, then the settings.
func buildPage(in *Input) (*page, error) {
	eps := endpointsOf(in)
	p := pageHead(in, eps)
	for _, add := range builtinSections() {
		if err := add(p, in, eps); err != nil {
			return nil, err
		}
	}
	for i := range in.Sections {
		s, ok, err := extensionSection(in, eps, &in.Sections[i])
		if err != nil {
			return nil, err
		}
		if ok {
			p.Sections = append(p.Sections, s)
		}
	}
	return p, nil
}

// addSection is one built-in section: it adds itself to the page when it applies to the run.
type addSection func(p *page, in *Input, eps []endpointRef) error

// pageOrder is the report's sections in page order: the built-in ones, and the features'
// (package feature: the server's clock, SLOs and cost, conversations, the capacity search,
// the servers' scrapes, the GPUs), by feature name. Where a feature's section goes is the page's; what it shows is
// the feature's (TestEveryFeatureSectionHasAPlace).
var pageOrder = []struct {
	builtin addSection
	feature string
}{
	{builtin: addTimeSeriesSection}, {builtin: addDistributionsSection}, {feature: "server timing"}, {feature: "slo"},
	{builtin: addPromptSection}, {feature: "turns"}, {builtin: addLanesSection}, {builtin: addSweepSection},
	{feature: "capacity"}, {feature: "server"}, {feature: "gpu"},
}

// builtinSections are the sections in page order.
func builtinSections() []addSection {
	out := make([]addSection, len(pageOrder))
	for i, o := range pageOrder {
		out[i] = o.builtin
		if o.feature != "" {
			out[i] = featureSection(o.feature)
		}
	}
	return out
}

// featureSection adds feature name's section (feature.Feature.Section), when it has one.
func featureSection(name string) addSection {
	return func(p *page, in *Input, eps []endpointRef) error {
		for _, f := range feature.All() {
			if f.Name != name || f.Section == nil {
				continue
			}
			sec := f.Section(reportFor(in, eps, name))
			s, ok, err := extensionSection(in, eps, &sec)
			if ok && err == nil {
				p.Sections = append(p.Sections, s)
			}
			return err
		}
		return nil
	}
}

// reportFor is what the report holds as the feature named name reads it: with what it kept
// of each request when it keeps something (feature.Feature.Keep).
func reportFor(in *Input, eps []endpointRef, name string) *feature.Report {
	r := &feature.Report{Snap: &in.Summary, Capacity: in.Capacity}
	if in.Requests != nil && in.Requests.first != 0 {
		r.Axis = feature.NewTimeAxis(in.Requests.first, in.Requests.last)
	}
	slot := -1 // its place among the Collector's keeps
	if in.Requests != nil {
		slot = slices.IndexFunc(in.Requests.keeps, func(kp keep) bool { return kp.feature == name })
	}
	for i := range eps {
		e := &eps[i]
		re := feature.ReportEndpoint{Index: e.idx, Name: e.name, Stats: e.stats, Kept: e.series != nil}
		if e.series != nil && slot >= 0 {
			reqs := e.requests()
			re.Requests = make([]feature.Request, 0, len(reqs))
			for _, q := range reqs {
				re.Requests = append(re.Requests, feature.Request{Start: q.start, End: q.end, Counted: q.counted,
					TTFT: q.ttft, Decode: q.decode, TTFTOK: q.ttftOK, DecodeOK: q.decodeOK, Kept: q.kept[slot]})
			}
		}
		r.Endpoints = append(r.Endpoints, re)
	}
	return r
}

// add appends a section of charts to the page and returns it (for its table).
func (p *page) add(id, title, intro string, charts []*chart) (*pageSection, error) {
	s, err := sectionOf(id, title, intro, charts)
	if err != nil {
		return nil, err
	}
	p.Sections = append(p.Sections, s)
	return &p.Sections[len(p.Sections)-1], nil
}

func addTimeSeriesSection(p *page, in *Input, eps []endpointRef) error {
	_, err := p.add("timeseries", "Over time", "How the run went, second by second.", timeSeriesCharts(in, eps))
	return err
}

func addDistributionsSection(p *page, in *Input, eps []endpointRef) error {
	_, err := p.add("distributions", "Distributions", "Whole-run distributions of the ok requests.", distributionCharts(in, eps))
	return err
}

func addPromptSection(p *page, _ *Input, eps []endpointRef) error {
	if !promptsVary(eps) {
		return nil
	}
	_, err := p.add("prompt", "Prompt size", "How TTFT grows with the prompt: prefill time, queueing and network.", []*chart{promptChart(eps)})
	return err
}

func addSweepSection(p *page, in *Input, eps []endpointRef) error {
	if in.Sweep == nil {
		return nil
	}
	last, err := p.add("sweep", "Sweep", "Each step ran every endpoint at one concurrency.", sweepCharts(in.Sweep, eps))
	if err != nil {
		return err
	}
	t := export.SweepTableOf(in.Sweep)
	last.Table = &SectionTable{Header: t.Header, Rows: t.Rows}
	for _, n := range t.Notes {
		last.Intro += " " + strings.ToUpper(n[:1]) + n[1:] + "."
	}
	return nil
}

// extensionSection draws a Section (a feature's, or one handed in): its charts, then its
// series; none without an ID, nor without charts and without data.
func extensionSection(in *Input, eps []endpointRef, sec *Section) (pageSection, bool, error) {
	if sec.ID == "" {
		return pageSection{}, false, nil
	}
	var ax feature.TimeAxis
	first, last := int64(0), int64(0)
	if in.Requests != nil {
		first, last = in.Requests.first, in.Requests.last
	}
	var charts []*chart
	for i := range sec.Charts {
		charts = append(charts, chartOf(&sec.Charts[i]))
	}
	for _, ts := range sec.Series {
		for _, pts := range ts.Points {
			for _, pt := range pts {
				t := pt.At.UnixNano()
				if first == 0 || t < first {
					first = t
				}
				last = max(last, t)
			}
		}
	}
	if first != 0 {
		ax = feature.NewTimeAxis(first, last)
	}
	has := len(sec.Charts) > 0 || sec.Table != nil && len(sec.Table.Rows) > 0
	for _, ts := range sec.Series {
		c := &chart{id: ts.ID, title: ts.Title, xLabel: ax.Label(), yLabel: ts.YLabel, note: ts.Note, xFromZero: true}
		for i := range eps {
			pts := ts.Points[eps[i].name]
			if len(pts) == 0 {
				continue
			}
			l := layer{ep: eps[i].idx, kind: drawLine}
			for _, pt := range pts {
				l.xs, l.ys = append(l.xs, ax.X(pt.At.UnixNano())), append(l.ys, pt.Value)
			}
			c.layers = append(c.layers, l)
			c.legend = append(c.legend, legendItem{text: eps[i].name, ep: eps[i].idx})
		}
		has = has || c.hasData()
		charts = append(charts, c)
	}
	if !has {
		return pageSection{}, false, nil
	}
	s, err := sectionOf(sec.ID, sec.Title, sec.Intro, charts)
	s.Table = sec.Table
	return s, true, err
}
