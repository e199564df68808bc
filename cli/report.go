package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/report"
	"tokscope/sample"
	"tokscope/stats"
	"tokscope/sweep"
)

// runReport gathers the HTML report of a run (--report, or the TUI's w key) from the events
// its consumer sees, and writes it. It implements ui.Reporter. Like the statistics, it is fed
// by the one goroutine that reads the events.
type runReport struct {
	// path is --report, made absolute when the run starts; "" in the TUI, where every w
	// writes a new file (reportName) into dir.
	path string
	// dir is where the TUI's w writes: the working directory tokscope started in, absolute,
	// so that the notice names a file the user can open from anywhere.
	dir      string
	taken    map[string]bool // the names w has given this session, so a second w in one second gets its own
	settings []report.Setting
	version  string
	col      *report.Collector
	search   *sweep.Search // --find-max: its report joins the page (capacity.go)
}

// newRunReport prepares the report of a run over eps; cfg describes the endpoints in the
// settings (nil in a replay, whose record does not keep them).
func newRunReport(o *options, eps []config.Endpoint, cfg *config.Config) *runReport {
	settings := report.Settings(o.args, cfg)
	if o.replay != "" {
		settings = append(settings, report.Setting{Name: "replay of", Value: o.replay})
	}
	col := report.NewCollector(eps)
	col.SetTTFTFrom(o.ttftFrom)
	return &runReport{path: absPath(o.report), dir: absPath("."), settings: settings, version: o.build, col: col}
}

// absPath is path made absolute against the working directory now; "" stays "", and a path
// that cannot be made absolute (the working directory is gone) stays as given.
func absPath(path string) string {
	if path == "" {
		return ""
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

func (r *runReport) Observe(ev sample.Event) bool { return r.col.Observe(ev) }
func (r *runReport) Reset()                       { r.col.Reset() }

// Save captures the report as it stands and returns the work of writing it (ui.Reporter).
func (r *runReport) Save(snap stats.Snapshot, sw *sweep.Report) func() (string, error) {
	in := report.Input{Summary: snap, Requests: r.col.Clone(), Sweep: sw, Settings: r.settings, Version: r.version}
	if r.search != nil {
		rep := r.search.Report()
		in.Capacity = &rep
	}
	path := r.path
	if path == "" {
		path = r.freeName(time.Now())
	}
	return func() (string, error) { return path, report.WriteFile(path, in) }
}

// write writes the report at the end of a headless run, a sweep or a replay; a failure is
// one line on stderr and makes the exit status at least 1.
func (r *runReport) write(snap stats.Snapshot, sw *sweep.Report, code int, stderr io.Writer) int {
	if r == nil {
		return code
	}
	path, err := r.Save(snap, sw)()
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --report: %v\n", err)
		return max(code, ExitFailed)
	}
	// On stderr: stdout holds only the summary (-o json is one document).
	fmt.Fprintf(stderr, "tokscope: report written to %s\n", path)
	return code
}

// freeName is the path of the next report w writes: reportName in dir, with -2, -3, … when
// that name was given this session or a file has it (a second w within one second).
func (r *runReport) freeName(now time.Time) string {
	if r.taken == nil {
		r.taken = map[string]bool{}
	}
	base := strings.TrimSuffix(reportName(now), ".html")
	path := filepath.Join(r.dir, base+".html")
	for n := 2; r.taken[path] || exists(path); n++ {
		path = filepath.Join(r.dir, base+"-"+strconv.Itoa(n)+".html")
	}
	r.taken[path] = true
	return path
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// reportName is the file the TUI's w key writes, named for when; Save puts it in the
// working directory tokscope started in.
func reportName(now time.Time) string {
	return "tokscope-report-" + now.Format("20060102-150405") + ".html"
}
