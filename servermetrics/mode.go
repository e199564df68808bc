package servermetrics

import (
	"errors"
	"net/url"
	"strings"
)

// Mode is what --server-metrics asks for: Off, auto (URL == "": each endpoint's origin +
// /metrics), or one URL scraped for every endpoint (its series filtered by each endpoint's
// model).
type Mode struct {
	Off bool
	URL string
}

// Auto is the default mode.
var Auto = Mode{}

// ParseMode reads "auto", "off" or an absolute http(s) URL (without user:password@, which
// would put a credential on the command line and in notes).
func ParseMode(s string) (Mode, error) {
	switch strings.TrimSpace(s) {
	case "", "auto":
		return Auto, nil
	case "off":
		return Mode{Off: true}, nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Mode{}, errors.New("accepted values are auto, off or an http(s) URL such as http://127.0.0.1:8000/metrics")
	}
	if u.User != nil {
		return Mode{}, errors.New("the URL must not hold user:password@")
	}
	return Mode{URL: s}, nil
}

// origin is scheme://host[:port] of a URL, "" when it has none.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
