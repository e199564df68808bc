package config

import (
	"net/url"
)

// CheckGPUMetrics is the rule for gpu_metrics: (and --gpu-metrics): an absolute http(s) URL
// with a host, without user:password@, a query string or a fragment (which could carry a
// credential into notes and records). It returns "" when s keeps it, else the message.
func CheckGPUMetrics(s string) string {
	const example = "e.g. http://127.0.0.1:9400/metrics (dcgm-exporter)"
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "gpu_metrics is empty: give a dcgm-exporter URL, " + example
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
		return "gpu_metrics must be an absolute http:// or https:// URL, " + example
	case u.User != nil:
		return "gpu_metrics must not hold credentials (user:password@)"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "gpu_metrics must not have a query string or fragment (?…, #…)"
	}
	return ""
}
