package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"tokscope/feature"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A chart is drawn with gonum.org/v1/plot onto its SVG canvas and inlined in the page: no
// script, no font or image fetched. Text names the Liberation Sans font the layout was
// measured with; the page's CSS falls back to the metric-compatible Arial/Helvetica.

// Chart size in SVG user units (points); the page scales it to the column's width.
const (
	chartWidth  = 560
	chartHeight = 300
)

// palette gives endpoint i the colour palette[i%len(palette)] in every chart (the Okabe–Ito
// colours, distinguishable with the common colour-vision deficiencies); past len(palette)
// endpoints the lines are dashed as well.
var palette = []color.NRGBA{
	{0x00, 0x72, 0xb2, 0xff}, // blue
	{0xe6, 0x9f, 0x00, 0xff}, // orange
	{0x00, 0x9e, 0x73, 0xff}, // bluish green
	{0xd5, 0x5e, 0x00, 0xff}, // vermillion
	{0xcc, 0x79, 0xa7, 0xff}, // reddish purple
	{0x56, 0xb4, 0xe9, 0xff}, // sky blue
	{0x8c, 0x6d, 0x00, 0xff}, // dark yellow
	{0x44, 0x44, 0x44, 0xff}, // grey
}

func endpointColor(i int) color.NRGBA { return palette[i%len(palette)] }

// endpointCSS is endpoint i's colour as CSS, for the page's swatches.
func endpointCSS(i int) template.CSS {
	c := endpointColor(i)
	return template.CSS(fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B))
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

func endpointDashes(i int) []vg.Length {
	if i/len(palette)%2 == 1 {
		return []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return nil
}

var (
	inkColor   = color.NRGBA{0x22, 0x22, 0x22, 0xff}
	mutedColor = color.NRGBA{0x66, 0x66, 0x66, 0xff}
	gridColor  = color.NRGBA{0xe3, 0xe3, 0xe3, 0xff}
)

func sans(size vg.Length, bold bool) font.Font {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return f
}

// layerKind is how a layer draws its points.
type layerKind int

const (
	drawLine     layerKind = iota // a polyline through the points
	drawPoints                    // a dot per point
	drawBand                      // the area between lo and hi
	drawMarks                     // a larger ringed dot per point (percentile markers)
	drawStems                     // a dot per point on a thin line down to 0 (counts of rare events)
	drawSegments                  // a line from each even point to the next, width points wide (lanes.go)
)

// layer is one endpoint's data in a chart.
type layer struct {
	ep     int // endpoint index: its colour
	kind   layerKind
	xs, ys []float64
	lo, hi []float64 // drawBand: the band's bounds at each x
	labels []string  // optional text beside each point
	width  float64   // drawSegments: the line's width in points
	failed bool      // drawSegments: in the error colour instead of the endpoint's
	dashed bool      // drawSegments: dashed
}

// refLine is a horizontal guide (the p50/p90/p99 levels of a CDF).
type refLine struct {
	y     float64
	label string
}

// legendItem is one entry of a chart's legend.
type legendItem struct {
	text string
	ep   int  // colour; -1 for a neutral (grey) entry
	mark bool // a dot rather than a line
}

// chart is one chart of the report. With no layer it is not drawn: the page says "no data".
type chart struct {
	id, title  string
	xLabel     string // with its unit, e.g. "time since start (s)"
	yLabel     string
	note       string // a caption: what is drawn and how it is aggregated
	empty      string // said instead of a chart without data; "no data" when ""
	logX       bool
	yFromZero  bool
	yInteger   bool // the Y values are counts
	headroom   bool // the points carry labels: leave room above and right
	xFromZero  bool
	xTicks     []float64   // when set, the only ticks of the X axis (e.g. the concurrency levels)
	yTicks     []plot.Tick // when set, the only ticks of the Y axis, with their labels (the lanes' rows)
	layers     []layer
	refs       []refLine
	legend     []legendItem
	xMin, xMax *float64
	yMax       *float64
}

func (c *chart) hasData() bool { return len(c.layers) > 0 }

// svg draws the chart; "" when it has no data.
func (c *chart) svg() (template.HTML, error) {
	if !c.hasData() {
		return "", nil
	}
	p := plot.New()
	styleAxis(&p.X)
	styleAxis(&p.Y)
	p.X.Label.Text, p.Y.Label.Text = c.xLabel, c.yLabel
	p.BackgroundColor = color.Transparent
	p.Add(&plotter.Grid{Vertical: draw.LineStyle{Color: gridColor, Width: vg.Points(0.5)}, Horizontal: draw.LineStyle{Color: gridColor, Width: vg.Points(0.5)}})
	p.X.Tick.Marker, p.Y.Tick.Marker = niceTicks{}, niceTicks{integer: c.yInteger}
	if c.logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{}
	}
	if c.xTicks != nil {
		var ticks []plot.Tick
		for _, v := range c.xTicks {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	if c.yTicks != nil {
		p.Y.Tick.Marker = plot.ConstantTicks(c.yTicks)
	}
	for i := range c.layers {
		if err := addLayer(p, &c.layers[i]); err != nil {
			return "", fmt.Errorf("%s: %w", c.id, err)
		}
	}
	if c.yFromZero {
		p.Y.Min = math.Min(0, p.Y.Min)
	}
	if c.xFromZero {
		p.X.Min = math.Min(0, p.X.Min)
	}
	if c.xMin != nil {
		p.X.Min = *c.xMin
	}
	if c.xMax != nil {
		p.X.Max = *c.xMax
	}
	if c.yMax != nil {
		p.Y.Max = *c.yMax
	}
	if c.headroom { // room for the points' labels
		p.Y.Max += 0.08 * (p.Y.Max - p.Y.Min)
		p.X.Max += 0.08 * (p.X.Max - p.X.Min)
	}
	if p.Y.Max <= p.Y.Min { // a flat series: give it room
		p.Y.Max = p.Y.Min + math.Max(1, math.Abs(p.Y.Min))
	}
	if p.X.Max <= p.X.Min {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
		if c.logX {
			p.X.Min, p.X.Max = p.X.Max/10, p.X.Max*10
		}
	}
	for _, r := range c.refs {
		addRefLine(p, r)
	}

	canvas := vgsvg.NewWith(vgsvg.UseWH(chartWidth, chartHeight))
	dc := draw.New(canvas)
	top := drawHeader(dc, c.title, c.legend)
	p.Draw(draw.Crop(dc, 0, -vg.Points(8), 0, -top))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return "", err
	}
	return inlineSVG(buf.Bytes(), c.title), nil
}

func styleAxis(a *plot.Axis) {
	a.Label.TextStyle.Font = sans(10, false)
	a.Label.TextStyle.Color = inkColor
	a.Tick.Label.Font = sans(9, false)
	a.Tick.Label.Color = mutedColor
	a.Color = mutedColor
	a.Width = vg.Points(0.75)
	a.Tick.Color = mutedColor
	a.Tick.Width = vg.Points(0.5)
	a.Padding = vg.Points(2)
}

func addLayer(p *plot.Plot, l *layer) error {
	col := endpointColor(l.ep)
	xys := make(plotter.XYs, len(l.xs))
	for i := range l.xs {
		xys[i] = plotter.XY{X: l.xs[i], Y: l.ys[i]}
	}
	switch l.kind {
	case drawLine:
		ln, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		ln.Color, ln.Width, ln.Dashes = col, vg.Points(1.5), endpointDashes(l.ep)
		p.Add(ln)
	case drawPoints:
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(col, 0xb0), Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	case drawMarks:
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(3.2), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		ring, _ := plotter.NewScatter(xys)
		ring.GlyphStyle = draw.GlyphStyle{Color: color.White, Radius: vg.Points(3.2), Shape: draw.RingGlyph{}}
		p.Add(ring)
	case drawStems:
		for _, xy := range xys {
			stem, err := plotter.NewLine(plotter.XYs{{X: xy.X, Y: 0}, xy})
			if err != nil {
				return err
			}
			stem.Color, stem.Width = col, vg.Points(1)
			p.Add(stem)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
	case drawSegments:
		return addSegments(p, l, col)
	case drawBand:
		poly := make(plotter.XYs, 0, 2*len(l.xs))
		for i := range l.xs {
			poly = append(poly, plotter.XY{X: l.xs[i], Y: l.lo[i]})
		}
		for i := len(l.xs) - 1; i >= 0; i-- {
			poly = append(poly, plotter.XY{X: l.xs[i], Y: l.hi[i]})
		}
		pg, err := plotter.NewPolygon(poly)
		if err != nil {
			return err
		}
		pg.Color, pg.LineStyle.Width = withAlpha(col, 0x38), 0
		p.Add(pg)
	}
	if len(l.labels) > 0 {
		lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: l.labels})
		if err != nil {
			return err
		}
		for i := range lb.TextStyle {
			lb.TextStyle[i].Font = sans(8, false)
			lb.TextStyle[i].Color = col
		}
		lb.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(3)}
		p.Add(lb)
	}
	return nil
}

// addRefLine draws a dashed grey horizontal line at r.y across the data's X range, labelled
// at its right end.
func addRefLine(p *plot.Plot, r refLine) {
	xys := plotter.XYs{{X: p.X.Min, Y: r.y}, {X: p.X.Max, Y: r.y}}
	ln, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	ln.Color, ln.Width, ln.Dashes = withAlpha(mutedColor, 0x90), vg.Points(0.6), []vg.Length{vg.Points(3), vg.Points(2)}
	p.Add(ln)
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys[1:], Labels: []string{r.label}})
	if err != nil {
		return
	}
	lb.TextStyle[0].Font = sans(8, false)
	lb.TextStyle[0].Color = mutedColor
	lb.TextStyle[0].XAlign = draw.XRight
	lb.Offset = vg.Point{X: -vg.Points(2), Y: vg.Points(2)}
	p.Add(lb)
}

// drawHeader draws the title and, under it, the legend as one or more rows of entries, and
// returns the height they take from the top of dc.
func drawHeader(dc draw.Canvas, title string, items []legendItem) vg.Length {
	const margin = 8
	titleStyle := textStyle(sans(12, true), inkColor)
	y := dc.Max.Y - vg.Points(margin) - titleStyle.FontExtents().Ascent
	dc.FillText(titleStyle, vg.Point{X: dc.Min.X + vg.Points(margin), Y: y}, title)
	y -= titleStyle.FontExtents().Descent

	ls := textStyle(sans(9, false), inkColor)
	h := ls.FontExtents().Height
	x := dc.Min.X + vg.Points(margin)
	y -= h + vg.Points(2)
	const thumb, gap = 16, 14
	for _, it := range items {
		w := vg.Points(thumb+4) + ls.Width(it.text)
		if x+w > dc.Max.X-vg.Points(margin) && x > dc.Min.X+vg.Points(margin) {
			x = dc.Min.X + vg.Points(margin)
			y -= h + vg.Points(2)
		}
		col := color.NRGBA(mutedColor)
		var dashes []vg.Length
		if it.ep >= 0 {
			col, dashes = endpointColor(it.ep), endpointDashes(it.ep)
		}
		mid := y + ls.FontExtents().Ascent/2 - vg.Points(1)
		if it.mark {
			dc.DrawGlyph(draw.GlyphStyle{Color: col, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}, vg.Point{X: x + vg.Points(thumb/2), Y: mid})
		} else {
			dc.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(2.5), Dashes: dashes}, x, mid, x+vg.Points(thumb), mid)
		}
		dc.FillText(ls, vg.Point{X: x + vg.Points(thumb+4), Y: y}, it.text)
		x += w + vg.Points(gap)
	}
	return dc.Max.Y - y + vg.Points(6)
}

func textStyle(f font.Font, c color.Color) draw.TextStyle {
	return draw.TextStyle{Color: c, Font: f, Handler: plot.DefaultTextHandler}
}

var svgPrelude = regexp.MustCompile(`(?s)\A.*?<svg width="[^"]*" height="[^"]*" (viewBox="[^"]*")\s*xmlns="[^"]*"\s*xmlns:xlink="[^"]*">`)

// inlineSVG turns vgsvg's document into an element for the page: no XML prelude or
// namespace declarations (HTML5 needs none), sized by CSS, labelled for screen readers.
func inlineSVG(doc []byte, title string) template.HTML {
	out := svgPrelude.ReplaceAll(doc, []byte(`<svg class="chart" $1 role="img" aria-label="`+template.HTMLEscapeString(title)+`">`))
	return template.HTML(bytes.TrimSpace(out))
}

// scatterOrBand is feature.ScatterOrBand's layers as the chart draws them.
func scatterOrBand(ep int, pts []feature.Point) ([]layer, bool) {
	ls, aggregated := feature.ScatterOrBand(ep, pts)
	return layersOf(ls), aggregated
}

// layersOf are a feature's layers as the chart draws them.
func layersOf(ls []feature.Layer) []layer {
	if ls == nil {
		return nil
	}
	kinds := [...]layerKind{feature.DrawLine: drawLine, feature.DrawPoints: drawPoints, feature.DrawBand: drawBand, feature.DrawMarks: drawMarks}
	out := make([]layer, len(ls))
	for i, l := range ls {
		out[i] = layer{ep: l.Ep, kind: kinds[l.Kind], xs: l.Xs, ys: l.Ys, lo: l.Lo, hi: l.Hi, labels: l.Labels}
	}
	return out
}

// chartOf is a feature's chart as the report draws it.
func chartOf(c *feature.Chart) *chart {
	out := &chart{id: c.ID, title: c.Title, xLabel: c.XLabel, yLabel: c.YLabel, note: c.Note, empty: c.Empty,
		yFromZero: c.YFromZero, xFromZero: c.XFromZero, yInteger: c.YInteger, logX: c.LogX, headroom: c.Headroom, xTicks: c.XTicks,
		xMin: c.XMin, xMax: c.XMax, yMax: c.YMax, layers: layersOf(c.Layers)}
	for _, r := range c.Refs {
		out.refs = append(out.refs, refLine{y: r.Y, label: r.Label})
	}
	for _, l := range c.Legend {
		out.legend = append(out.legend, legendItem{text: l.Text, ep: l.Ep, mark: l.Mark})
	}
	return out
}
