package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"tokscope/config"
	"tokscope/otlpexport"
	"tokscope/redact"
)

// pushAtExit bounds the last push when the run ends: a collector that does not answer must
// not hold the exit up for longer.
const pushAtExit = 5 * time.Second

// checkOTLP checks --otlp: an http(s) URL without credentials, and only where something is
// measured.
func (o *options) checkOTLP() error {
	if o.otlp == "" {
		return nil
	}
	if o.replay != "" {
		return usagef("--replay and --otlp exclude each other: a replay shows a recorded run and sends no request")
	}
	if _, err := otlpexport.EndpointURL(o.otlp); err != nil {
		return usagef("invalid value %q for --otlp: %v (e.g. http://127.0.0.1:4318)", redact.URL(o.otlp), err)
	}
	return nil
}

// startPush begins pushing the exporter's registry to --otlp.
func startPush(ctx context.Context, o *options, cfg *config.Config, g prometheus.Gatherer) (*otlpexport.Pusher, error) {
	push, err := otlpexport.Start(ctx, g, otlpexport.Options{
		URL: o.otlp, Version: o.build, Endpoints: cfg.Endpoints,
		Shard: o.shard.Label(), // the resource attribute tokscope.shard, as the series' shard label
	})
	if err != nil {
		return nil, fmt.Errorf("--otlp: %w", err)
	}
	return push, nil
}

// stopPush pushes the metrics a last time and stops pushing; a failed push is one note on w,
// never an error of the run. Stopping twice is a no-op.
func (r *wiring) stopPush(w io.Writer) {
	if r.push == nil {
		return
	}
	push := r.push
	r.push = nil
	ctx, cancel := context.WithTimeout(context.Background(), pushAtExit)
	defer cancel()
	if err := push.Shutdown(ctx); err != nil {
		fmt.Fprintf(w, "tokscope: --otlp: %v\n", err)
	}
}
