package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"
)

// Defaults of a scrape: once a second per target, 2 s per request, 4 MiB per body.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 2 * time.Second
	DefaultMaxBody  = 4 << 20
)

// Instant is one scrape of one target: what its server said at At, or the error that kept
// it from saying anything (Error != ""). Its JSON is a line of a --record file.
type Instant struct {
	Target  string         `json:"target"` // Target.Key()
	At      time.Time      `json:"at"`
	Kind    Kind           `json:"kind,omitempty"`
	Version string         `json:"version,omitempty"`
	Error   string         `json:"error,omitempty"`
	Models  []ModelInstant `json:"models,omitempty"`
	Slots   []Slot         `json:"slots,omitempty"`  // llama.cpp /slots
	Ollama  []OllamaModel  `json:"ollama,omitempty"` // Ollama /api/ps
	GPU     *GPUInstant    `json:"gpu,omitempty"`
	// GPUError is why the GPU exporter could not be read ("" when it was, or there is none).
	GPUError string `json:"gpu_error,omitempty"`
}

// Slot is one llama.cpp slot as /slots shows it.
type Slot struct {
	ID         int     `json:"id"`
	Task       int     `json:"task"`
	Processing bool    `json:"processing"`
	Decoded    float64 `json:"decoded"` // tokens generated so far by its current (or last) task
	Prompt     float64 `json:"prompt_tokens"`
	Context    int     `json:"n_ctx"`
}

// OllamaModel is one model Ollama has loaded, as /api/ps lists it.
type OllamaModel struct {
	Name      string    `json:"name"`
	Size      int64     `json:"size"`
	SizeVRAM  int64     `json:"size_vram"`
	ExpiresAt time.Time `json:"expires_at"`
	Context   int       `json:"context_length,omitempty"`
}

// Options bound the scrapes.
type Options struct {
	Interval time.Duration // between two scrapes of one target (DefaultInterval)
	Timeout  time.Duration // per HTTP request (DefaultTimeout)
	MaxBody  int64         // per response body (DefaultMaxBody)
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	return o
}

// Scraper scrapes each target in a goroutine of its own, so a slow or dead server delays
// nobody else, at phases spread over the interval, so the fleet is never asked all at once.
// Its goroutines send on Instants(); Run closes the channel when ctx is done and they have
// returned. SetTargets may be called at any time (a targets file re-read).
type Scraper struct {
	opts   Options
	client *http.Client
	out    chan Instant

	mu      sync.Mutex
	ctx     context.Context
	loops   map[string]context.CancelFunc
	wg      sync.WaitGroup
	started chan struct{}
}

// NewScraper makes a Scraper; nothing is scraped before Run.
func NewScraper(opts Options) *Scraper {
	opts = opts.withDefaults()
	return &Scraper{
		opts: opts,
		client: &http.Client{
			Transport: &http.Transport{
				Proxy:               http.ProxyFromEnvironment,
				DialContext:         (&net.Dialer{Timeout: opts.Timeout}).DialContext,
				MaxIdleConnsPerHost: 2,
				IdleConnTimeout:     90 * time.Second,
				TLSHandshakeTimeout: opts.Timeout,
				DisableCompression:  true,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		out:     make(chan Instant, 64),
		loops:   map[string]context.CancelFunc{},
		started: make(chan struct{}),
	}
}

// Instants is where every scrape's result arrives.
func (s *Scraper) Instants() <-chan Instant { return s.out }

// Run starts the scrapes of the targets set so far and of those set later; it returns when
// ctx is done and every scrape has stopped, and then closes Instants().
func (s *Scraper) Run(ctx context.Context, targets []Target) {
	s.mu.Lock()
	s.ctx = ctx
	s.mu.Unlock()
	s.SetTargets(targets)
	<-ctx.Done()
	s.wg.Wait()
	close(s.out)
}

// SetTargets makes targets the set scraped: new ones start, gone ones stop, the others go on
// undisturbed. The new ones' first scrapes are spread over one interval, in key order.
func (s *Scraper) SetTargets(targets []Target) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctx == nil || s.ctx.Err() != nil {
		return
	}
	want := map[string]Target{}
	for _, t := range targets {
		want[t.Key()] = t
	}
	for key, stop := range s.loops {
		if _, ok := want[key]; !ok {
			stop()
			delete(s.loops, key)
		}
	}
	keys := sortedKeys(targets)
	for i, key := range keys {
		if _, running := s.loops[key]; running {
			continue
		}
		ctx, cancel := context.WithCancel(s.ctx)
		s.loops[key] = cancel
		phase := Phase(i, len(keys), s.opts.Interval)
		s.wg.Add(1)
		go func(t Target) {
			defer s.wg.Done()
			s.loop(ctx, t, phase)
		}(want[key])
	}
}

// Phase is when the i-th of n targets is first scraped, after the scrapes start: the n
// targets' scrapes are spread evenly over one interval, never all at the same instant.
func Phase(i, n int, interval time.Duration) time.Duration {
	if n <= 1 {
		return 0
	}
	return time.Duration(int64(interval) * int64(i) / int64(n))
}

// loop scrapes one target every interval, from its phase on, until ctx is done.
func (s *Scraper) loop(ctx context.Context, t Target, phase time.Duration) {
	timer := time.NewTimer(phase)
	defer timer.Stop()
	st := &targetState{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		next := time.Now().Add(s.opts.Interval)
		in := s.scrape(ctx, t, st)
		if ctx.Err() != nil {
			return
		}
		select {
		case s.out <- in:
		case <-ctx.Done():
			return
		}
		timer.Reset(max(time.Until(next), 0))
	}
}

// targetState is what one target's loop remembers between scrapes.
type targetState struct {
	kind      Kind
	version   string
	versioned bool // the version was asked for (once per kind)
	noSlots   bool // llama.cpp answered /slots with an error: its slots are off
}

// scrape reads one target once: its metrics (or, for Ollama, /api/ps), llama.cpp's slots,
// its version once, and its GPU exporter.
func (s *Scraper) scrape(ctx context.Context, t Target, st *targetState) Instant {
	in := Instant{Target: t.Key()}
	if err := s.scrapeServer(ctx, t, st, &in); err != nil {
		in.Error = err.Error()
		in.Models, in.Slots, in.Ollama = nil, nil, nil
	}
	in.Kind, in.Version = st.kind, st.version
	if t.GPUMetrics != "" {
		g, err := s.scrapeGPU(ctx, t.GPUMetrics)
		if err != nil {
			in.GPUError = err.Error()
		} else {
			in.GPU = g
		}
	}
	in.At = time.Now()
	return in
}

func (s *Scraper) scrapeServer(ctx context.Context, t Target, st *targetState, in *Instant) error {
	if st.kind != KindOllama {
		body, ctype, err := s.get(ctx, t.URL+t.metricsPath())
		var status statusError
		switch {
		case errors.As(err, &status) && status == http.StatusNotFound && (st.kind == "" || st.kind == KindOllama):
			if v, ok := s.ollamaVersion(ctx, t); ok {
				st.kind, st.version, st.versioned = KindOllama, v, true
				break
			}
			return err
		case err != nil:
			return err
		default:
			fams, err := parseExposition(body, ctype)
			if err != nil {
				return err
			}
			k, ok := detectKind(fams)
			if !ok {
				return errors.New("not recognised: no vllm:, sglang:, llamacpp: or tgi_ families")
			}
			if k != st.kind {
				st.kind, st.versioned, st.version = k, false, ""
			}
			in.Models = extractModels(fams, k)
		}
	}
	if !st.versioned {
		st.version, st.versioned = s.version(ctx, t, st.kind), true
	}
	switch st.kind {
	case KindLlamaCpp:
		if !st.noSlots {
			slots, err := s.slots(ctx, t)
			if err != nil {
				st.noSlots = true // --no-slots, or a build without them: counters alone
			}
			in.Slots = slots
		}
	case KindOllama:
		models, err := s.ollamaPS(ctx, t)
		if err != nil {
			return err
		}
		in.Ollama = models
	}
	return nil
}

// statusError is an HTTP answer other than 200.
type statusError int

func (e statusError) Error() string { return fmt.Sprintf("HTTP %d", int(e)) }

// get fetches url within the timeout and the body bound; it never follows a redirect.
func (s *Scraper) get(ctx context.Context, url string) (body []byte, contentType string, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, "", errors.New("bad URL")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, "", transportError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, "", statusError(resp.StatusCode)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, s.opts.MaxBody+1))
	if err != nil {
		return nil, "", transportError(err)
	}
	if int64(len(body)) > s.opts.MaxBody {
		return nil, "", fmt.Errorf("body larger than %d MiB", s.opts.MaxBody>>20)
	}
	return body, resp.Header.Get("Content-Type"), nil
}

// transportError names what went wrong in a few words, never with the URL.
func transportError(err error) error {
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout(), errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New("timeout")
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("connection refused")
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("connection reset")
	case errors.Is(err, context.Canceled):
		return errors.New("canceled")
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return errors.New("host not found")
	}
	return errors.New("unreachable")
}

// getJSON fetches url and decodes its JSON into v.
func (s *Scraper) getJSON(ctx context.Context, url string, v any) error {
	body, _, err := s.get(ctx, url)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errors.New("unreadable JSON")
	}
	return nil
}

func (s *Scraper) ollamaVersion(ctx context.Context, t Target) (string, bool) {
	var v struct {
		Version *string `json:"version"`
	}
	if s.getJSON(ctx, t.URL+"/api/version", &v) != nil || v.Version == nil {
		return "", false
	}
	return *v.Version, true
}

// versionPaths is where each server says its version without an inference request, and
// the JSON field that holds it.
var versionPaths = map[Kind]struct{ path, field string }{
	KindVLLM:     {"/version", "version"},
	KindSGLang:   {"/get_server_info", "version"},
	KindLlamaCpp: {"/props", "build_info"},
	KindTGI:      {"/info", "version"},
}

// version asks the server its version; "" when it does not say.
func (s *Scraper) version(ctx context.Context, t Target, k Kind) string {
	vp, ok := versionPaths[k]
	if !ok {
		return ""
	}
	var doc map[string]any
	if s.getJSON(ctx, t.URL+vp.path, &doc) != nil {
		return ""
	}
	v, _ := doc[vp.field].(string)
	if len(v) > 40 {
		v = v[:40]
	}
	return v
}

// slotJSON is the part of one llama.cpp /slots entry read: is_processing (recent builds) or
// state (older, 0 = idle); next_token a list (recent) or one object (older).
type slotJSON struct {
	ID           int             `json:"id"`
	Task         int             `json:"id_task"`
	Ctx          int             `json:"n_ctx"`
	Prompt       float64         `json:"n_prompt_tokens"`
	IsProcessing *bool           `json:"is_processing"`
	State        *int            `json:"state"`
	NextToken    json.RawMessage `json:"next_token"`
}

func (s *Scraper) slots(ctx context.Context, t Target) ([]Slot, error) {
	var raw []slotJSON
	if err := s.getJSON(ctx, t.URL+"/slots", &raw); err != nil {
		return nil, err
	}
	return slotsOf(raw), nil
}

func slotsOf(raw []slotJSON) []Slot {
	out := make([]Slot, 0, len(raw))
	for _, r := range raw {
		busy := r.IsProcessing != nil && *r.IsProcessing || r.IsProcessing == nil && r.State != nil && *r.State != 0
		var list []struct {
			NDecoded float64 `json:"n_decoded"`
		}
		if json.Unmarshal(r.NextToken, &list) != nil {
			list = list[:0]
			var one struct {
				NDecoded float64 `json:"n_decoded"`
			}
			if json.Unmarshal(r.NextToken, &one) == nil {
				list = append(list, one)
			}
		}
		sl := Slot{ID: r.ID, Task: r.Task, Processing: busy, Prompt: r.Prompt, Context: r.Ctx}
		for _, nt := range list {
			if nt.NDecoded > 0 && !math.IsInf(nt.NDecoded, 0) {
				sl.Decoded += nt.NDecoded
			}
		}
		out = append(out, sl)
	}
	return out
}

func (s *Scraper) ollamaPS(ctx context.Context, t Target) ([]OllamaModel, error) {
	var ps struct {
		Models []struct {
			Name      string    `json:"name"`
			Size      int64     `json:"size"`
			SizeVRAM  int64     `json:"size_vram"`
			ExpiresAt time.Time `json:"expires_at"`
			Context   int       `json:"context_length"`
		} `json:"models"`
	}
	if err := s.getJSON(ctx, t.URL+"/api/ps", &ps); err != nil {
		return nil, fmt.Errorf("/api/ps: %w", err)
	}
	out := make([]OllamaModel, 0, len(ps.Models))
	for _, m := range ps.Models {
		out = append(out, OllamaModel{Name: m.Name, Size: m.Size, SizeVRAM: m.SizeVRAM, ExpiresAt: m.ExpiresAt, Context: m.Context})
	}
	return out, nil
}

// scrapeGPU reads a dcgm-exporter's power and energy.
func (s *Scraper) scrapeGPU(ctx context.Context, url string) (*GPUInstant, error) {
	body, ctype, err := s.get(ctx, url)
	if err != nil {
		return nil, err
	}
	fams, err := parseExposition(body, ctype)
	if err != nil {
		return nil, err
	}
	g, ok := gpuOf(fams)
	if !ok {
		return nil, errors.New("no DCGM_FI_DEV_POWER_USAGE or energy families")
	}
	return g, nil
}
