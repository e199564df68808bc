package config

import (
	"os"
	"path/filepath"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// Watch is a config file's watch: section, read by `tokscope watch -c FILE` (and by
// `tokscope -c FILE` when the file has no endpoints: the watch mode):
//
//	watch:
//	  targets: [10.0.0.1:8000, "http://gpu-2:8000/v1"]
//	  targets_file: fleet.json   # Prometheus file service discovery, relative to the config
//	  interval: 1s
//	  window: 10s
//	  gpu_metrics: http://10.0.0.1:9400/metrics
//
// Zero durations and empty strings are not given (the command line's defaults apply).
type Watch struct {
	Targets     []string
	TargetsFile string
	Interval    time.Duration
	Window      time.Duration
	GPUMetrics  string
}

var watchKeys = []string{"targets", "targets_file", "interval", "window", "gpu_metrics"}

func (l *loader) watch(e entry) (*Watch, *Error) {
	es, err := l.entries(e.value, "watch", 0)
	if err != nil {
		return nil, err
	}
	w := &Watch{}
	for _, se := range es {
		switch se.key {
		case "targets":
			w.Targets, err = l.stringList(se)
		case "targets_file":
			w.TargetsFile, err = l.relativeFile(se)
		case "interval":
			w.Interval, _, err = l.duration(se, false)
		case "window":
			w.Window, _, err = l.duration(se, false)
		case "gpu_metrics":
			w.GPUMetrics, _, err = l.str(se)
		default:
			err = l.errNode(se.keyNode, "%s", unknownKey(se.key, watchKeys))
		}
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// stringList reads a list of non-empty strings.
func (l *loader) stringList(e entry) ([]string, *Error) {
	r, err := l.resolve(e.value)
	if err != nil {
		return nil, err
	}
	seq, ok := r.(*ast.SequenceNode)
	if !ok {
		return nil, l.errValue(e, "%s must be a list, got %s", e.key, kindOf(r))
	}
	out := make([]string, 0, len(seq.Values))
	for _, item := range seq.Values {
		s, ok := scalarText(item)
		if !ok || s == "" {
			return nil, l.errNode(item, "%s: each item is a URL or host:port", e.key)
		}
		out = append(out, s)
	}
	return out, nil
}

// relativeFile reads a file name relative to the config file, which must exist.
func (l *loader) relativeFile(e entry) (string, *Error) {
	v, _, err := l.str(e)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(v) && l.file != "" {
		v = filepath.Join(filepath.Dir(l.file), v)
	}
	if st, serr := os.Stat(v); serr != nil || st.IsDir() {
		return "", l.errValue(e, "%s: cannot read %s", e.key, v)
	}
	return v, nil
}
