package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/discover"
	"tokscope/promexport"
	"tokscope/ui"
	"tokscope/watch"
)

// `tokscope watch`: a fleet table of servers read from what they export, sending them no
// inference request (package watch; its screens in ui/watch*.go).

type watchOptions struct {
	urls, gpu         []string
	configFile        string
	targetsFile       string
	discover          bool
	localServers      []discover.Candidate // where --discover looks (the process's list; tests give their own)
	interval, window  time.Duration
	timeout, duration time.Duration
	once              bool
	output            string
	record, replay    string
	prometheus        string
	sort, filter      string
	canaryModel       string
	changed           func(flag string) bool // set on the command line
}

// watchCommand is `tokscope watch [URL…]`, its flags its own (a watch sends no request, so
// none of a measuring run's apply as they are).
func watchCommand() *command {
	w := &watchOptions{}
	return &command{
		name: "watch", summary: "monitor servers from their own metrics, sending them no inference request",
		usage: "watch [flags] [URL…]",
		about: "Monitors inference servers (vLLM, SGLang, llama.cpp, TGI, Ollama) from what they already export — their\n" +
			"/metrics, llama.cpp's /slots, Ollama's /api/ps, a dcgm-exporter — and sends them no inference request: a\n" +
			"fleet table (rates and percentiles over the last window; percentiles estimated from the servers' own\n" +
			"histograms), Enter drills into one server. Targets: URLs (base URL, origin or host:port), -c FILE (its\n" +
			"endpoints and its watch: section), --targets FILE (Prometheus file service discovery), else the local\n" +
			"servers discovery finds. Headless: --once -o json|table, or --duration D -o json.",
		flags: []string{},
		own:   func(fs *pflag.FlagSet, _ *options) { w.register(fs) },
		args: func(o *options, words []string) error {
			w.urls, w.changed = append(w.urls, words...), o.set
			return w.check()
		},
		run: func(ctx context.Context, env *runEnv) int {
			w.localServers = env.proc.localServers
			return runWatch(ctx, w, env.stdout, env.stderr)
		},
	}
}

// watchConfigMode is `tokscope -c FILE` for a config with only a watch: section.
func watchConfigMode(file string) *watchOptions {
	o := &watchOptions{}
	o.register(newFlagSet("tokscope watch"))
	o.configFile = file
	return o
}

// register defines watch's flags on fs, bound to o.
func (o *watchOptions) register(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&o.urls, "url", "u", nil, "a server to watch: base `URL`, origin or host:port (repeatable; also as words after the flags)")
	fs.StringVarP(&o.configFile, "config", "c", "", "watch the servers of this config `FILE`'s endpoints and its watch: section")
	fs.StringVar(&o.targetsFile, "targets", "", "Prometheus file service-discovery `FILE` (JSON or YAML), re-read when it changes")
	fs.BoolVar(&o.discover, "discover", false, "also watch the local servers discovery finds (the default without other targets)")
	fs.StringArrayVar(&o.gpu, "gpu-metrics", nil, "dcgm-exporter /metrics `URL` for the --url at the same position (one applies to all)")
	fs.DurationVar(&o.interval, "interval", watch.DefaultInterval, "`D` between two scrapes of a server")
	fs.DurationVar(&o.window, "window", watch.DefaultWindow, "span `D` of the rates and percentiles")
	fs.DurationVar(&o.timeout, "timeout", watch.DefaultTimeout, "bound `D` on each scrape request")
	fs.BoolVar(&o.once, "once", false, "print one snapshot of the fleet (after two scrapes, so rates exist) and exit")
	fs.DurationVar(&o.duration, "duration", 0, "watch for `D`, then quit; with -o, print a summary of the whole span")
	fs.StringVarP(&o.output, "output", "o", "", "headless output `FORMAT`: table | json")
	fs.StringVar(&o.record, "record", "", "keep every scrape in `FILE` (JSON lines)")
	fs.StringVar(&o.replay, "replay", "", "show a watch --record `FILE` again instead of scraping")
	fs.StringVar(&o.prometheus, "metrics-listen", "", "re-export the fleet's figures at `ADDR`/metrics (a bare port binds 127.0.0.1), with a server label")
	fs.StringVar(&o.sort, "sort", "", "sort by a `COLUMN`: "+strings.Join(watch.ColumnKeys(), ", "))
	fs.StringVar(&o.filter, "filter", "", "show only rows whose server, model, kind or labels contain `TEXT`")
	fs.StringVar(&o.canaryModel, "canary-model", "", "the `MODEL` the canary request asks for (default: the server's first)")
	o.changed = func(string) bool { return false }
}

func (o *watchOptions) check() error {
	switch {
	case o.output != "" && o.output != "json" && o.output != "table":
		return fmt.Errorf("watch: -o %q: want table or json", o.output)
	case o.once && o.duration > 0:
		return errors.New("watch: --once and --duration exclude each other")
	case (o.once || o.output != "") && o.output == "":
		return errors.New("watch: --once needs -o table or -o json")
	case o.output != "" && !o.once && o.duration <= 0 && o.replay == "":
		return errors.New("watch: -o prints a snapshot: add --once, or --duration D for a summary")
	case o.interval < 100*time.Millisecond || o.window < o.interval:
		return errors.New("watch: --interval must be ≥ 100ms and --window ≥ --interval")
	case len(o.gpu) > 1 && len(o.gpu) != len(o.urls):
		return fmt.Errorf("watch: %d --gpu-metrics for %d --url: give one, or one per --url", len(o.gpu), len(o.urls))
	}
	if o.sort != "" {
		if _, ok := columnKey(o.sort); !ok {
			hint := ""
			if c := config.Closest(o.sort, watch.ColumnKeys()); c != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", c)
			}
			return fmt.Errorf("watch: --sort %q: no such column%s; one of %s", o.sort, hint, strings.Join(watch.ColumnKeys(), ", "))
		}
	}
	return nil
}

func columnKey(k string) (string, bool) {
	for _, c := range watch.ColumnKeys() {
		if c == k {
			return c, true
		}
	}
	return "", false
}

// runWatch runs a parsed `tokscope watch` until ctx is done (Ctrl-C), the duration ends, or
// the user quits; it returns the exit status.
func runWatch(ctx context.Context, o *watchOptions, stdout, stderr io.Writer) int {
	if o.replay != "" {
		return watchReplay(ctx, o, stdout, stderr)
	}
	targets, err := o.targets(ctx)
	if err == nil && len(targets) == 0 && o.output != "" { // a targets file may fill later, but not for a snapshot
		err = errors.New("watch: no server to watch: the targets file lists none")
	}
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	if o.output == "" && !isTerminal(stdout) {
		fmt.Fprintln(stderr, "tokscope: standard output is not a terminal; for a snapshot add --once -o table|json")
		return ExitUsage
	}
	sess, err := newWatchSession(ctx, o, targets)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: %v\n", err)
		return ExitUsage
	}
	defer sess.close(stderr)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	sess.start(ctx, o)
	if o.output != "" {
		return sess.headless(o, cancel, stdout, stderr)
	}
	return exitStatus(stderr, ui.RunWatch(ctx, sess.uiOptions(o)))
}

// targets gathers --url, the config file's endpoints, the targets file and, with --discover
// or when nothing else is given, the local servers discovery finds.
func (o *watchOptions) targets(ctx context.Context) ([]watch.Target, error) {
	var lists [][]watch.Target
	var urls []watch.Target
	for i, u := range o.urls {
		t, err := watch.NewTarget(u, "url")
		if err != nil {
			return nil, fmt.Errorf("--url: %v", err)
		}
		if len(o.gpu) > 0 {
			t.GPUMetrics = o.gpu[min(i, len(o.gpu)-1)]
		}
		urls = append(urls, t)
	}
	lists = append(lists, urls)
	if o.configFile != "" {
		eps, err := o.configTargets()
		if err != nil {
			return nil, err
		}
		lists = append(lists, eps)
	}
	if o.targetsFile != "" {
		ts, err := watch.LoadTargetsFile(o.targetsFile)
		if err != nil {
			return nil, fmt.Errorf("--targets %v", err)
		}
		lists = append(lists, ts)
	}
	if o.discover || (len(o.urls) == 0 && o.configFile == "" && o.targetsFile == "") {
		lists = append(lists, discovered(ctx, o.localServers))
	}
	all := watch.MergeTargets(lists...)
	if len(all) == 0 && o.targetsFile == "" {
		return nil, errors.New("watch: no server to watch: give --url, --targets FILE or -c FILE (discovery found none)")
	}
	return all, nil
}

// configTargets reads the config file: its endpoints' servers and its watch: section, whose
// settings apply where the command line does not set them.
func (o *watchOptions) configTargets() ([]watch.Target, error) {
	cfg, err := config.Load(o.configFile)
	if err != nil {
		return nil, err
	}
	var out []watch.Target
	for _, ep := range cfg.Endpoints {
		t, err := watch.NewTarget(ep.BaseURL, "config")
		if err != nil {
			return nil, fmt.Errorf("%s: endpoint %s: %v", o.configFile, ep.Name, err)
		}
		t.GPUMetrics = ep.GPUMetrics
		out = append(out, t)
	}
	w := cfg.Watch
	if w == nil {
		return out, nil
	}
	for _, raw := range w.Targets {
		t, err := watch.NewTarget(raw, "config")
		if err != nil {
			return nil, fmt.Errorf("%s: watch: %v", o.configFile, err)
		}
		t.GPUMetrics = w.GPUMetrics
		out = append(out, t)
	}
	if w.TargetsFile != "" && o.targetsFile == "" {
		o.targetsFile = w.TargetsFile
	}
	if w.Interval > 0 && !o.changed("interval") {
		o.interval = w.Interval
	}
	if w.Window > 0 && !o.changed("window") {
		o.window = w.Window
	}
	return out, o.check()
}

// discovered is the local servers discovery finds among candidates, as targets.
func discovered(ctx context.Context, candidates []discover.Candidate) []watch.Target {
	var out []watch.Target
	for _, f := range discover.LocalWith(ctx, &http.Client{Timeout: 2 * time.Second}, candidates) {
		if t, err := watch.NewTarget(f.BaseURL, "discovered"); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// watchSession is one watch: the scraper, and what takes every scrape beside the fleet
// (the record file, the exporter). The fleet itself belongs to whoever reads the scrapes:
// the headless loop, or the UI's Update.
type watchSession struct {
	targets  []watch.Target
	scraper  *watch.Scraper
	recorder *watch.Recorder
	exporter *promexport.Watch
	window   time.Duration
	changes  chan []watch.Target
	notices  chan string
	done     chan struct{}
}

func newWatchSession(ctx context.Context, o *watchOptions, targets []watch.Target) (*watchSession, error) {
	s := &watchSession{
		targets: targets, window: o.window,
		scraper: watch.NewScraper(watch.Options{Interval: o.interval, Timeout: o.timeout}),
		changes: make(chan []watch.Target, 1), notices: make(chan string, 4), done: make(chan struct{}),
	}
	if o.duration > 0 && o.output != "" { // a summary of the whole span
		s.window = o.duration + o.interval
	}
	if o.record != "" {
		rec, err := watch.NewRecorder(o.record, targets, s.window, o.interval)
		if err != nil {
			return nil, fmt.Errorf("--record: %v", err)
		}
		s.recorder = rec
	}
	if o.prometheus != "" {
		addr, err := promexport.ListenAddr(o.prometheus)
		if err == nil {
			s.exporter = promexport.NewWatch()
			_, err = promexport.Listen(ctx, addr, s.exporter.Handler())
		}
		if err != nil {
			return nil, fmt.Errorf("--metrics-listen: %v", err)
		}
	}
	return s, nil
}

// start runs the scrapes (and follows the targets file) until ctx is done.
func (s *watchSession) start(ctx context.Context, o *watchOptions) {
	go func() {
		s.scraper.Run(ctx, s.targets)
		close(s.done)
	}()
	if o.targetsFile != "" {
		s.follow(ctx, o.targetsFile)
	}
}

// follow re-reads the targets file while ctx lasts: the scraper takes the new targets at
// once, the fleet through changes (its reader applies them).
func (s *watchSession) follow(ctx context.Context, path string) {
	first, _ := os.ReadFile(path)
	go watch.FollowTargetsFile(ctx, path, 2*time.Second, first, func(ts []watch.Target) {
		s.scraper.SetTargets(ts)
		select {
		case s.changes <- ts:
		case <-ctx.Done():
		}
	}, func(err error) {
		select {
		case s.notices <- fmt.Sprintf("--targets: %v (keeping the previous targets)", err):
		default:
		}
	})
}

// observe is what the fleet's reader does with each scrape: the fleet takes it, then the
// record file and the exporter.
func (s *watchSession) observe(f *watch.Fleet, in watch.Instant) {
	f.Observe(in)
	if s.recorder != nil {
		_ = s.recorder.Write(in)
	}
	if s.exporter != nil {
		s.exporter.Set(f.Rows(in.At))
	}
}

// retarget applies a targets-file change to the fleet.
func (s *watchSession) retarget(f *watch.Fleet, ts []watch.Target) {
	f.SetTargets(ts)
	if s.recorder != nil {
		_ = s.recorder.Targets(ts)
	}
}

func (s *watchSession) close(stderr io.Writer) {
	if s.recorder != nil {
		if err := s.recorder.Close(); err != nil {
			fmt.Fprintf(stderr, "tokscope: --record: %v\n", err)
		}
	}
}

// headless reads scrapes until every server was scraped twice (--once) or the duration
// ends, then prints the fleet. Exit 1 when a server could not be read.
func (s *watchSession) headless(o *watchOptions, stop func(), stdout, stderr io.Writer) int {
	f := watch.NewFleet(s.window)
	f.SetTargets(s.targets)
	scrapes := map[string]int{}
	for in := range s.scraper.Instants() {
		s.observe(f, in)
		scrapes[in.Target]++
		select {
		case ts := <-s.changes:
			s.retarget(f, ts)
		case n := <-s.notices:
			fmt.Fprintf(stderr, "tokscope: %s\n", n)
		default:
		}
		if o.once && f.Ready(scrapes, 2) {
			stop()
		}
	}
	<-s.done
	now := time.Now()
	snap := watch.Snapshot{At: now, WindowS: s.window.Seconds(), Servers: f.Rows(now)}
	if o.duration > 0 {
		snap.Servers = f.Summary(now)
	}
	return printWatch(snap, o, stdout)
}

func printWatch(snap watch.Snapshot, o *watchOptions, stdout io.Writer) int {
	snap.Servers = watch.Filter(snap.Servers, o.filter)
	if o.sort != "" {
		watch.SortRows(snap.Servers, o.sort, true)
	}
	write := watch.WriteTable
	if o.output == "json" {
		write = watch.WriteJSON
	}
	if err := write(stdout, snap); err != nil {
		return ExitFailed
	}
	for _, r := range snap.Servers {
		if r.ScrapedAt == nil || r.LastError != nil {
			return ExitFailed
		}
	}
	return ExitOK
}

// watchReplay shows a record again: headless, the fleet as it was at the record's end (the
// whole span with --duration); else the fleet table replayed at its own pace.
func watchReplay(ctx context.Context, o *watchOptions, stdout, stderr io.Writer) int {
	rp, err := watch.ReadReplay(o.replay)
	if err != nil {
		fmt.Fprintf(stderr, "tokscope: --replay: %v\n", err)
		return ExitUsage
	}
	if o.output == "" {
		return exitStatus(stderr, ui.RunWatch(ctx, ui.WatchOptions{Replay: rp, Sort: o.sort, Filter: o.filter}))
	}
	window := rp.Window
	if o.duration > 0 {
		window = o.duration
	}
	f := watch.NewFleet(window)
	last := rp.Play(f)
	snap := watch.Snapshot{At: last, WindowS: window.Seconds(), Servers: f.Rows(last)}
	if o.duration > 0 {
		snap.Servers = f.Summary(last)
	}
	return printWatch(snap, o, stdout)
}

// uiOptions wires the session into the fleet screen.
func (s *watchSession) uiOptions(o *watchOptions) ui.WatchOptions {
	return ui.WatchOptions{
		Targets: s.targets, Window: s.window, Instants: s.scraper.Instants(),
		Observe: s.observe, Retarget: s.retarget, Changes: s.changes, Notices: s.notices,
		Sort: o.sort, Filter: o.filter, Canary: newCanary(o.canaryModel),
	}
}

// newCanary is the drill-down's canary: one request for model ("" = the server's first).
func newCanary(model string) func(context.Context, watch.Target) watch.CanaryResult {
	return func(ctx context.Context, t watch.Target) watch.CanaryResult { return watch.Canary(ctx, t, model) }
}
