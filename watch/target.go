package watch

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"tokscope/config"
)

// Target is one server to watch. Its figures come from GET requests only (/metrics, /slots,
// /api/ps, a version path): never an inference request.
type Target struct {
	// URL is the server's origin, e.g. http://127.0.0.1:8000 (a base URL's path is dropped).
	URL string `json:"url"`
	// MetricsPath is where its Prometheus metrics are (default /metrics; the file
	// service-discovery label __metrics_path__ sets it).
	MetricsPath string `json:"metrics_path,omitempty"`
	// Name is what the fleet table shows: the label "name", else "instance", else host:port.
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	// GPUMetrics is a dcgm-exporter /metrics URL scraped with it ("" none): watts, tokens/J.
	GPUMetrics string `json:"gpu_metrics,omitempty"`
	// Source says where the target came from: "url", "config", "discovered" or a file path.
	Source string `json:"source,omitempty"`
}

// Key identifies a target: two entries with the same key are one server.
func (t Target) Key() string { return t.URL + t.metricsPath() }

func (t Target) metricsPath() string {
	if t.MetricsPath == "" {
		return "/metrics"
	}
	return t.MetricsPath
}

// NewTarget makes a target of a URL as a user writes it: a base URL (http://h:8000/v1), an
// origin, or host:port (http assumed).
func NewTarget(raw, source string) (Target, error) {
	s := strings.TrimSpace(raw)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Target{}, fmt.Errorf("%q is not an http(s) URL or host:port", raw)
	}
	return Target{URL: u.Scheme + "://" + u.Host, Name: u.Host, Source: source}, nil
}

// fileGroup is one entry of Prometheus' file service-discovery format.
type fileGroup struct {
	Targets []string          `json:"targets" yaml:"targets"`
	Labels  map[string]string `json:"labels" yaml:"labels"`
}

// ParseTargetsFile reads Prometheus' file service-discovery format, JSON or YAML:
// [{"targets": ["host:port", ...], "labels": {...}}]. The labels __scheme__ and
// __metrics_path__ work as in Prometheus; "name" (else "instance") names the row;
// gpu_metrics gives the group's dcgm-exporter URL. Errors name file:line:col.
func ParseTargetsFile(path string, src []byte) ([]Target, error) {
	var groups []fileGroup
	// JSON is YAML: one strict parser for both gives line:col for either.
	if err := yaml.UnmarshalWithOptions(src, &groups, yaml.Strict()); err != nil {
		return nil, fmt.Errorf("%s:%s", path, yamlError(err))
	}
	var out []Target
	seen := map[string]bool{}
	for gi, g := range groups {
		scheme := g.Labels["__scheme__"]
		if scheme == "" {
			scheme = "http"
		}
		for _, hp := range g.Targets {
			if hp == "" || strings.Contains(hp, "/") {
				return nil, fmt.Errorf("%s: group %d: target %q: want host:port, as Prometheus does", path, gi+1, hp)
			}
			t, err := NewTarget(scheme+"://"+hp, path)
			if err != nil {
				return nil, fmt.Errorf("%s: group %d: %v", path, gi+1, err)
			}
			t.MetricsPath = g.Labels["__metrics_path__"]
			t.GPUMetrics = g.Labels["gpu_metrics"]
			t.Labels = map[string]string{}
			for k, v := range g.Labels {
				if !strings.HasPrefix(k, "__") && k != "gpu_metrics" {
					t.Labels[k] = v
				}
			}
			if n := firstOf(g.Labels["name"], g.Labels["instance"]); n != "" {
				t.Name = n
			}
			if !seen[t.Key()] {
				seen[t.Key()] = true
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// yamlError is goccy/go-yaml's message with its position first ("line:col: …").
func yamlError(err error) string {
	msg := yaml.FormatError(err, false, false)
	first := strings.SplitN(msg, "\n", 2)[0]
	if _, field, ok := strings.Cut(first, `unknown field "`); ok {
		field, _, _ = strings.Cut(field, `"`)
		if hint := config.Closest(field, []string{"targets", "labels"}); hint != "" {
			first += fmt.Sprintf(" (did you mean %q?)", hint)
		}
	}
	if i := strings.Index(first, "]"); strings.HasPrefix(first, "[") && i > 0 {
		return first[1:i] + ":" + first[i+1:]
	}
	return " " + first
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// LoadTargetsFile reads and parses a file service-discovery file.
func LoadTargetsFile(path string) ([]Target, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTargetsFile(path, src)
}

// MergeTargets keeps the first target of each key, in order, and names rows uniquely
// (a second "h:8000" becomes "h:8000#2").
func MergeTargets(lists ...[]Target) []Target {
	var out []Target
	seen, names := map[string]bool{}, map[string]int{}
	for _, l := range lists {
		for _, t := range l {
			if seen[t.Key()] {
				continue
			}
			seen[t.Key()] = true
			names[t.Name]++
			if n := names[t.Name]; n > 1 {
				t.Name = fmt.Sprintf("%s#%d", t.Name, n)
			}
			out = append(out, t)
		}
	}
	return out
}

// sortedKeys is the targets' keys in a stable order (staggering and tests depend on it).
func sortedKeys(ts []Target) []string {
	keys := make([]string, 0, len(ts))
	for _, t := range ts {
		keys = append(keys, t.Key())
	}
	sort.Strings(keys)
	return keys
}

// FollowTargetsFile re-reads a file service-discovery file every interval and calls onChange
// with its targets whenever its content changes, until ctx is done. A file that cannot be
// read or parsed goes to onError and the previous targets stay, as in Prometheus. It calls
// both from its own goroutine.
func FollowTargetsFile(ctx context.Context, path string, every time.Duration, last []byte,
	onChange func([]Target), onError func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		src, err := os.ReadFile(path)
		if err != nil {
			onError(err)
			continue
		}
		if bytes.Equal(src, last) {
			continue
		}
		last = src
		targets, err := ParseTargetsFile(path, src)
		if err != nil {
			onError(err)
			continue
		}
		onChange(targets)
	}
}
