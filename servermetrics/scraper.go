package servermetrics

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"tokscope/config"
)

// Defaults of Options.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 2 * time.Second
	// DefaultMaxBody bounds one /metrics or /slots body. vLLM's exposition is ~50 kB per
	// model and engine; a body beyond this is not one tokscope can use.
	DefaultMaxBody = 4 << 20
	// afterFailures consecutive failed scrapes of a target slow it to every backoffInterval: a
	// server without /metrics (a cloud API) is asked again now and then, not every second.
	afterFailures   = 3
	backoffInterval = 10 * time.Second
	// slotsRetry is how long llama.cpp's /slots rests after it failed (disabled with
	// --no-slots, or refused).
	slotsRetry = time.Minute
)

// Options tune a Scraper; zero values take the defaults.
type Options struct {
	Interval time.Duration // between scrapes of a target (DefaultInterval)
	Timeout  time.Duration // per HTTP request (DefaultTimeout)
	MaxBody  int64         // per body (DefaultMaxBody)
	// Transport replaces the HTTP transport (tests); nil builds one per target.
	Transport http.RoundTripper
	// OnKind, when set, is called once per endpoint when a scrape first recognises its
	// server's kind (KindVLLM, …): cli tells the probe, which then asks a vLLM server for its
	// per-request metrics. Called from the Scraper's goroutines; must be safe and quick.
	OnKind func(endpoint int, k Kind)
}

// Scraper scrapes the server-side metrics of a run's endpoints. Endpoints whose metrics
// live at the same URL (several models behind one server, the simulator of --demo) share one
// scrape a second; each gets its own Update, filtered by its model.
type Scraper struct {
	eps     []config.Endpoint
	targets []*target
	opts    Options
	out     chan Update
}

// target is one metrics URL and the endpoints read through it.
type target struct {
	url      string // …/metrics
	slotsURL string // the same origin's /slots (llama.cpp live progress)
	gpu      bool   // a GPU exporter (--gpu-metrics), read by scrapeGPU
	eps      []int
	// cred is the endpoint whose key and headers may be sent, after a 401/403 without them:
	// one whose own base_url has this target's origin, which receives them on every request
	// anyway. -1: credentials are never sent here (another origin, or no key configured).
	cred   int
	client *http.Client
}

// New returns a Scraper for eps in mode, or nil when mode is Off or no endpoint has a URL to
// scrape (then there is nothing to run).
//
// Each endpoint's GPUMetrics URL (--gpu-metrics, gpu_metrics:) is scraped too, whatever mode
// says, as a target of its own (gpu.go); endpoints with the same GPU URL share it.
func New(eps []config.Endpoint, mode Mode, opts Options) *Scraper {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	s := &Scraper{eps: eps, opts: opts, out: make(chan Update, 4*len(eps)+1)}
	s.addServerTargets(mode)
	s.addGPUTargets()
	if len(s.targets) == 0 {
		return nil
	}
	for _, t := range s.targets {
		t.client = s.newClient(t)
	}
	return s
}

// addServerTargets adds the servers' own /metrics of mode (none when it is Off).
func (s *Scraper) addServerTargets(mode Mode) {
	if mode.Off {
		return
	}
	byURL := map[string]*target{}
	for i, ep := range s.eps {
		u := mode.URL
		if u == "" {
			if o := origin(ep.BaseURL); o != "" {
				u = o + "/metrics"
			}
		}
		if u == "" {
			continue
		}
		t := byURL[u]
		if t == nil {
			t = &target{url: u, slotsURL: origin(u) + "/slots", cred: -1}
			byURL[u] = t
			s.targets = append(s.targets, t)
		}
		t.eps = append(t.eps, i)
		hasCred := ep.APIKeyEnv != "" || len(ep.Headers) > 0
		if t.cred < 0 && hasCred && origin(ep.BaseURL) == origin(u) {
			t.cred = i
		}
	}
}

// addGPUTargets adds each endpoint's GPU exporter. It never gets credentials: dcgm-exporter
// serves /metrics without any, and the endpoint's key is not for it.
func (s *Scraper) addGPUTargets() {
	byURL := map[string]*target{}
	for i, ep := range s.eps {
		u := ep.GPUMetrics
		if u == "" {
			continue
		}
		t := byURL[u]
		if t == nil {
			t = &target{url: u, gpu: true, cred: -1}
			byURL[u] = t
			s.targets = append(s.targets, t)
		}
		t.eps = append(t.eps, i)
	}
}

func (s *Scraper) newClient(t *target) *http.Client {
	tr := s.opts.Transport
	if tr == nil {
		insecure := false
		for _, i := range t.eps {
			// Only for the endpoint's own origin: its certificate is the one the user vouched for.
			insecure = insecure || s.eps[i].InsecureSkipVerify && origin(s.eps[i].BaseURL) == origin(t.url)
		}
		tr = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: s.opts.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: s.opts.Timeout,
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // opt-in per endpoint
		}
	}
	return &http.Client{
		Transport: tr,
		// A redirect is a failed scrape: following it could carry credentials elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Updates is where Run reports; it is closed when Run returns.
func (s *Scraper) Updates() <-chan Update { return s.out }

// Run scrapes every target in its own goroutine until ctx is done, sending each endpoint's
// Update on Updates after every scrape; then it closes Updates. A slow reader slows the
// scrapes, never a probe.
func (s *Scraper) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, t := range s.targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runTarget(ctx, t)
		}()
	}
	wg.Wait()
	close(s.out)
}

// targetState is what one target's goroutine carries from scrape to scrape.
type targetState struct {
	trackers    map[int]*tracker
	gpu         gpuTracker // a GPU target's energy from scrape to scrape
	useCred     bool       // a 401/403 asked for credentials, and they worked
	slotsOffTil time.Time  // /slots rests until then
	failures    int
	kindSaid    bool // OnKind was called for this target's endpoints
}

func (s *Scraper) runTarget(ctx context.Context, t *target) {
	st := &targetState{trackers: map[int]*tracker{}}
	for _, i := range t.eps {
		st.trackers[i] = &tracker{}
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			if t.gpu {
				s.lastGPUScrape(ctx, t, st)
			}
			return
		case <-timer.C:
		}
		started := time.Now()
		scrape := s.scrape
		if t.gpu {
			scrape = s.scrapeGPU
		}
		for _, u := range scrape(ctx, t, st) {
			select {
			case s.out <- u: // the run's loop hands it on: the record, the statistics, the screen
			case <-ctx.Done():
				return
			}
		}
		wait := s.opts.Interval
		if st.failures >= afterFailures {
			wait = max(backoffInterval, s.opts.Interval)
		}
		timer.Reset(max(wait-time.Since(started), 0))
	}
}

// scrape fetches and reads one target once, and returns one Update per endpoint.
func (s *Scraper) scrape(ctx context.Context, t *target, st *targetState) []Update {
	body, err := s.get(ctx, t, t.url, st)
	at := time.Now()
	if err != nil {
		st.failures++
		return s.notes(t, StateUnavailable, err.Error())
	}
	fams, err := parse(bytes.NewReader(body))
	if err != nil {
		st.failures++
		return s.notes(t, StateUnrecognised, "unreadable exposition")
	}
	kind, known := detect(fams)
	if known && !st.kindSaid && s.opts.OnKind != nil {
		st.kindSaid = true
		for _, i := range t.eps {
			s.opts.OnKind(i, kind)
		}
	}
	var decoded Value
	if kind == KindLlamaCpp && at.After(st.slotsOffTil) {
		if sb, err := s.get(ctx, t, t.slotsURL, st); err == nil {
			if n, err := decodedInSlots(sb); err == nil {
				decoded = some(n)
			}
		}
		if !decoded.OK {
			st.slotsOffTil = at.Add(slotsRetry)
		}
	}
	ups := make([]Update, 0, len(t.eps))
	recognised := false
	for _, i := range t.eps {
		in, note, ok := extract(fams, s.eps[i].Model)
		if !ok {
			ups = append(ups, Update{Endpoint: i, State: StateUnrecognised, Note: note})
			continue
		}
		recognised = true
		if decoded.OK && in.gen.OK {
			in.gen.V += decoded.V
			in.genLive = true
		}
		ups = append(ups, Update{Endpoint: i, State: StateOK, Reading: st.trackers[i].reading(at, in)})
	}
	if recognised {
		st.failures = 0
	} else {
		st.failures++
	}
	return ups
}

func (s *Scraper) notes(t *target, state State, note string) []Update {
	ups := make([]Update, len(t.eps))
	for k, i := range t.eps {
		ups[k] = Update{Endpoint: i, State: state, Note: note}
	}
	return ups
}

// errNote is a failed fetch, already phrased as a quiet note.
type errNote string

func (e errNote) Error() string { return string(e) }

// get fetches url within the timeout and the body bound. Without credentials first; after a
// 401/403, once with the target's credentials when it may carry them, and so on from then.
func (s *Scraper) get(ctx context.Context, t *target, url string, st *targetState) ([]byte, error) {
	body, status, err := s.fetch(ctx, t, url, st.useCred)
	if (status == http.StatusUnauthorized || status == http.StatusForbidden) && !st.useCred && t.cred >= 0 {
		if b, st2, err2 := s.fetch(ctx, t, url, true); err2 == nil && st2 == http.StatusOK {
			st.useCred = true
			return b, nil
		}
	}
	switch {
	case err != nil:
		return nil, err
	case status != http.StatusOK:
		return nil, errNote(fmt.Sprintf("HTTP %d", status))
	}
	return body, nil
}

func (s *Scraper) fetch(ctx context.Context, t *target, url string, withCred bool) (body []byte, status int, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, errNote("bad metrics URL")
	}
	// The classic text format: vLLM and SGLang would otherwise be free to answer OpenMetrics.
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=1,*/*;q=0.1")
	req.Header.Set("User-Agent", "tokscope")
	if withCred && t.cred >= 0 {
		ep := s.eps[t.cred]
		for k, v := range ep.HeaderValues() {
			req.Header.Set(k, v)
		}
		if key := ep.APIKey(); key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, 0, errNote(transportNote(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return nil, resp.StatusCode, nil
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct == "application/vnd.google.protobuf" {
		return nil, resp.StatusCode, errNote("protobuf exposition (not read)")
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBody+1))
	switch {
	case err != nil:
		return nil, resp.StatusCode, errNote(transportNote(err))
	case int64(len(body)) > s.opts.MaxBody:
		return nil, resp.StatusCode, errNote(fmt.Sprintf("body larger than %d MiB", s.opts.MaxBody>>20))
	}
	return body, resp.StatusCode, nil
}

// transportNote names a transport failure in a few words, never with the error's own text
// (which holds the URL).
func transportNote(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "host not found"
	case errors.As(err, &tlsErr):
		return "TLS certificate not trusted"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection reset"
	}
	return "unreachable"
}
