package report

import "html/template"

// pageTemplate is the whole page: one HTML document, its style inline, no script. Colours
// of the endpoints come from the chart palette so that a swatch matches its lines.
var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="tokscope {{.Version}}">
<title>tokscope report{{if .Start}} — {{.Start}}{{end}}</title>
<style>
:root { --ink: #222; --muted: #666; --line: #ddd; --soft: #f5f6f7; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "Liberation Sans", Arial, Helvetica, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 18px; margin: 36px 0 4px; padding-top: 12px; border-top: 1px solid var(--line); }
h3 { font-size: 15px; margin: 0; }
p.meta, p.intro, .muted { color: var(--muted); }
p.meta { margin: 0 0 12px; }
p.intro { margin: 0 0 14px; }
nav { margin: 8px 0 0; font-size: 13px; }
nav a { color: var(--muted); text-decoration: none; margin-right: 14px; }
nav a:hover { color: var(--ink); text-decoration: underline; }
.chips { display: flex; flex-wrap: wrap; gap: 8px 18px; margin: 10px 0 0; padding: 0; list-style: none; }
.chips li { display: flex; align-items: center; gap: 7px; }
.swatch { display: inline-block; width: 14px; height: 14px; border-radius: 3px; flex: none;
  -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 16px; }
.card { border: 1px solid var(--line); border-top-width: 4px; border-radius: 6px; padding: 12px 14px 10px; break-inside: avoid;
  -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.card h3 .model { font-weight: normal; color: var(--muted); margin-left: 6px; }
.card ul { list-style: none; margin: 6px 0 8px; padding: 0; font-size: 13px; color: var(--muted); }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.figures { width: 100%; font-size: 13px; }
table.figures th, table.figures td { padding: 3px 6px; text-align: right; white-space: nowrap; }
table.figures th:first-child, table.figures td:first-child { text-align: left; padding-left: 0; }
table.figures thead th { color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
table.figures tbody tr:nth-child(even) { background: var(--soft); }
pre { background: var(--soft); border-radius: 6px; padding: 10px 12px; font-size: 12px; overflow-x: auto; margin: 14px 0 0; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 18px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 6px 6px 8px; break-inside: avoid; page-break-inside: avoid; }
svg.chart { display: block; width: 100%; height: auto; }
svg.chart text { font-family: "Liberation Sans", Arimo, Arial, Helvetica, sans-serif !important; }
figcaption { font-size: 12px; color: var(--muted); padding: 2px 6px 0; }
.nodata { display: flex; flex-direction: column; min-height: 200px; padding: 6px 6px 0; }
.nodata p { flex: 1; display: flex; align-items: center; justify-content: center; margin: 8px 0;
  color: var(--muted); border: 1px dashed var(--line); border-radius: 4px; font-style: italic; }
table.steps { width: 100%; font-size: 13px; margin-top: 16px; }
table.steps th, table.steps td { padding: 3px 8px; text-align: right; white-space: nowrap; border-bottom: 1px solid var(--soft); }
table.steps th:nth-child(2), table.steps td:nth-child(2) { text-align: left; }
table.steps thead th { color: var(--muted); font-weight: 600; border-bottom: 1px solid var(--line); }
table.settings { font-size: 13px; }
table.settings th { text-align: left; font-weight: 600; padding: 3px 18px 3px 0; vertical-align: top; white-space: nowrap; }
table.settings td { padding: 3px 0; font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, monospace; font-size: 12px; word-break: break-word; }
footer { margin-top: 36px; font-size: 12px; color: var(--muted); }
@media (max-width: 900px) { .grid { grid-template-columns: minmax(0, 1fr); } }
@media print {
  @page { margin: 14mm 12mm; }
  body { font-size: 10pt; }
  main { max-width: none; padding: 0; }
  nav { display: none; }
  h2, p.intro { break-after: avoid; page-break-after: avoid; }
  .grid { grid-template-columns: minmax(0, 1fr); gap: 10px; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 8px; }
  .card { padding: 6px 8px; }
  .card ul, table.figures { font-size: 7.5pt; }
  table.figures th, table.figures td { padding: 1px 3px; }
  figure { width: 100%; max-width: 170mm; justify-self: center; }
  pre { white-space: pre-wrap; }
}
</style>
</head>
<body>
<main>
<header>
<h1>tokscope report</h1>
<p class="meta">{{if .Start}}Started {{.Start}} · lasted {{.Duration}} · {{end}}{{len .Endpoints}} endpoint{{if ne (len .Endpoints) 1}}s{{end}} · tokscope {{.Version}}</p>
<ul class="chips" id="endpoints">{{range .Endpoints}}
<li><span class="swatch" style="background: {{.Color}}"></span><strong>{{.Name}}</strong>{{if .Model}} <span class="muted">{{.Model}}</span>{{end}}</li>{{end}}
</ul>
<nav><a href="#summary">Summary</a>{{range .Sections}}<a href="#{{.ID}}">{{.Title}}</a>{{end}}<a href="#settings">Settings</a></nav>
</header>

<section id="summary">
<h2>Summary</h2>
<p class="intro">The figures of <code>-o table</code>: whole run, ok requests; ≈ marks figures from estimated token counts, — a figure without data.{{if .TTFTFrom}} TTFT is measured to the {{.TTFTFrom}} (<code>--ttft-from {{.TTFTFrom}}</code>).{{end}}</p>
{{if .Summary}}<div class="cards">{{range .Summary}}
<div class="card" style="border-top-color: {{.Color}}">
<h3><span class="swatch" style="background: {{.Color}}"></span> {{.Name}}{{if .Model}}<span class="model">{{.Model}}</span>{{end}}{{if .API}}<span class="model">{{.API}}</span>{{end}}</h3>
<ul>{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
<table class="figures">
<thead><tr><th></th>{{range $.Columns}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><td>{{.Label}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>
</div>{{end}}
</div>{{else}}<p class="muted">No request finished.</p>{{end}}
</section>
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Title}}</h2>
{{if .Intro}}<p class="intro">{{.Intro}}</p>{{end}}
{{if .Figures}}<div class="grid">{{range .Figures}}
<figure id="{{.ID}}">{{if .SVG}}
{{.SVG}}
{{else}}<div class="nodata"><h3>{{.Title}}</h3><p>{{.Empty}}</p></div>{{end}}
{{if .Note}}<figcaption>{{.Note}}</figcaption>{{end}}
</figure>{{end}}
</div>{{end}}
{{with .Table}}<table class="steps">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>{{end}}
</section>
{{end}}
<section id="settings">
<h2>Settings</h2>
{{if .Settings}}<table class="settings"><tbody>{{range .Settings}}
<tr><th>{{.Name}}</th><td>{{.Value}}</td></tr>{{end}}
</tbody></table>{{else}}<p class="muted">Not recorded.</p>{{end}}
</section>
<footer>Written by tokscope {{.Version}}. Self-contained: charts are inline SVG; nothing is fetched.</footer>
</main>
</body>
</html>
`))
