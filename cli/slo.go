package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"tokscope/config"
	"tokscope/servermetrics"
	"tokscope/stats"
)

// sloFlags are --slo, --slo-target and --server-metrics.
type sloFlags struct {
	sloText       string
	slo           *config.SLO // parsed by checkSLO; nil: the config's objectives, if any
	sloTargetText string
	sloTarget     float64 // parsed by checkSLO; 0: no target
	serverText    string
	server        servermetrics.Mode // parsed by checkSLO
	gpuMetrics    string             // --gpu-metrics URL, checked by checkSLO ("" = none)
}

func addSLOFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.sloText, "slo", "", "per-request objectives: a `LIST` like ttft=500ms,tpot=50ms,e2e=20s,itl=200ms (itl: the longest gap of a request)")
	fs.StringVar(&o.sloTargetText, "slo-target", "", "headless: exit 3 when fewer than `F` (0–1) of the counted requests meet every objective")
	fs.StringVar(&o.gpuMetrics, "gpu-metrics", "", "scrape an NVIDIA dcgm-exporter (or compatible) /metrics `URL` beside the server's: watts, utilisation, tokens per joule")
	fs.StringVar(&o.serverText, "server-metrics", "auto", "server-side metrics: `MODE` auto scrapes the server's own Prometheus /metrics (base URL's origin + /metrics); off; or a URL")
}

// checkSLO parses the three flags, one line naming the flag and what it accepts.
func (o *options) checkSLO() error {
	if o.set("slo") {
		slo, err := config.ParseSLO(o.sloText)
		if err != nil {
			return usagef("invalid value %q for --slo: %v", o.sloText, err)
		}
		o.slo = &slo
	}
	if o.set("slo-target") {
		f, err := strconv.ParseFloat(strings.TrimSpace(o.sloTargetText), 64)
		if err != nil || !(f > 0 && f <= 1) || math.IsNaN(f) {
			return usagef("invalid value %q for --slo-target: must be a share of requests > 0 and ≤ 1, e.g. 0.95", o.sloTargetText)
		}
		o.sloTarget = f
		if o.sweepSteps != nil {
			return usagef("--slo-target and --sweep exclude each other: a sweep reports each step, the target gates a run")
		}
	}
	mode, err := servermetrics.ParseMode(o.serverText)
	if err != nil {
		return usagef("invalid value %q for --server-metrics: %v", o.serverText, err)
	}
	o.server = mode
	if o.set("gpu-metrics") {
		if msg := config.CheckGPUMetrics(o.gpuMetrics); msg != "" {
			return usagef("invalid value %q for --gpu-metrics: %s", o.gpuMetrics, strings.TrimPrefix(msg, "gpu_metrics "))
		}
		if o.replay != "" {
			return usagef("--replay and --gpu-metrics exclude each other: a replay shows a recorded run and scrapes nothing")
		}
	}
	if o.replay != "" && o.set("server-metrics") {
		return usagef("--replay and --server-metrics exclude each other: a replay shows a recorded run and scrapes no server")
	}
	if o.replay != "" && o.sloTarget > 0 && o.slo == nil {
		return usagef("--slo-target needs --slo with --replay: a record keeps no objectives")
	}
	return nil
}

// checkObjectives: a target needs objectives, from --slo or the config's slo:; a search's
// tiers are resolved (resolveTiers).
func (o *options) checkObjectives(cfg *config.Config) error {
	if err := o.resolveTiers(cfg); err != nil {
		return err
	}
	eps := cfg.Endpoints
	if o.sloTarget == 0 || slices.ContainsFunc(eps, func(e config.Endpoint) bool { return e.SLO.Set() }) {
		return nil
	}
	return usagef("--slo-target needs objectives: give --slo ttft=500ms,… or slo: in the config")
}

// sloStatus is the exit status with --slo-target: 3 when an endpoint with objectives met them
// in fewer than the target's share of its counted requests (or counted none), said in one
// line on stderr; code otherwise. It takes precedence over 1: the gate is what was asked.
func sloStatus(o *options, snap *stats.Snapshot, code int, stderr io.Writer) int {
	if o.sloTarget == 0 {
		return code
	}
	var missed []string
	for i := range snap.Endpoints {
		e := &snap.Endpoints[i]
		switch s := e.SLO; {
		case s == nil:
		case s.Counted == 0:
			missed = append(missed, e.Name+" no counted request")
		case s.Attainment < o.sloTarget:
			missed = append(missed, fmt.Sprintf("%s %.1f%% (%d of %d)", e.Name, 100*s.Attainment, s.Good, s.Counted))
		}
	}
	if len(missed) == 0 {
		return code
	}
	fmt.Fprintf(stderr, "tokscope: SLO target %g not met: %s\n", o.sloTarget, strings.Join(missed, ", "))
	return ExitSLO
}
