// Package sim is tokscope's built-in streaming simulator: an HTTP server on loopback whose
// every endpoint ("profile") streams answers on a known schedule, with known chunking and
// injected faults, through five APIs (OpenAI chat and legacy completions, Responses, Anthropic
// Messages, Ollama's native chat). It serves `tokscope --demo`, the tests of other packages
// (ground truth for every metric) and the benchmarks.
//
// Besides the standard library it imports only the Prometheus client libraries, to serve a
// vLLM-style /metrics, and tiktoken-go's tokenizer (Profile.Tokenizer): never another tokscope
// package, the charm libraries or go-openai.
//
// Each Server owns its goroutines: net/http's, one per connection, and nothing else. Close ends
// every in-flight stream and returns once all of them are gone.
package sim

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"tokscope/kstamp"
)

// Options configure a Server.
type Options struct {
	// TrackSends remembers, per streamed response, when each data chunk was written and flushed
	// (see SendTimes and Sends). At most the last 10000 responses are kept.
	TrackSends bool
	// LogRequests keeps, per profile, the last 10000 requests as the server saw them: their
	// messages and tool structures, prompt and cached tokens, arrival and end (Server.Seen).
	LogRequests bool
	// ErrorLog receives net/http's own log lines. Nil discards them: in --demo the TUI owns the
	// terminal.
	ErrorLog *log.Logger

	// Listen is the address to listen on; "" is 127.0.0.1 on a random port. Tests and the
	// demo leave it empty; `tokscope sim --listen` sets it.
	Listen string

	tracked int // the responses TrackSends keeps; 0: trackedResponses (tests set fewer)
}

// trackedResponses bounds the memory of Options.TrackSends.
const trackedResponses = 10000

// Server is a running simulator. Its methods are safe for concurrent use.
type Server struct {
	url         string
	http        *http.Server
	endpointsMu sync.RWMutex // guards endpoints and exposed: a schedule adds its profile when first asked (models.go)
	endpoints   map[string]*endpoint
	exposed     []*endpoint // the profiles /metrics reports, in the order they were added
	order       []*endpoint // every profile, in the order they were added
	maxProfiles int         // set after Start's profiles: they + maxSchedules
	sends       *sendLog    // nil unless Options.TrackSends
	logRequests bool        // Options.LogRequests: each profile keeps a seenLog
	nextID      atomic.Uint64

	done      chan struct{} // closed by Close: every wait in a handler selects on it
	serveDone chan struct{} // closed when http.Server.Serve has returned
	closeOnce sync.Once

	connsMu sync.Mutex
	conns   map[net.Conn]closing // open connections, and whether to close each once its response is done
	connsWG sync.WaitGroup       // one per open connection; Close waits for it

	metrics *metricsHandler // /metrics: every profile but those with NoMetrics
}

// endpoint is one profile being served.
type endpoint struct {
	profile   Profile
	modelJSON string // the model id as a JSON string literal, quotes included
	requests  atomic.Int64
	// metricsAsked counts requests that asked for vLLM's metrics (IncludeMetricsSeen).
	metricsAsked atomic.Int64
	backend      *backend
	metrics      *metricsHandler // /<profile>/metrics; nil with NoMetrics
	// gpuMetrics is /<profile>/gpu/metrics (gpu.go); nil without GPU.Count.
	gpuMetrics *metricsHandler
	// engineLabel is the backend label of its series: "0", or "1", "2", ... for the further
	// exposed profiles with the same Model.
	engineLabel string
	tok         tokenFunc // the profile's tokenizer (Profile.Tokenizer)
	seen        *seenLog  // nil unless Options.LogRequests

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

// Start listens on 127.0.0.1 on a random port (or Options.Listen) and serves profiles until
// Close.
func Start(opts Options, profiles ...Profile) (*Server, error) {
	if len(profiles) == 0 {
		return nil, errors.New("sim: no profiles")
	}
	s := &Server{
		endpoints: make(map[string]*endpoint, len(profiles)),
		done:      make(chan struct{}),
		serveDone: make(chan struct{}),
		conns:     make(map[net.Conn]closing),
	}
	s.logRequests = opts.LogRequests
	var err error
	if s.metrics, err = newMetricsHandler(s.exposedEndpoints); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	for _, p := range profiles {
		if _, err := s.add(p); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	s.maxProfiles = len(profiles) + maxSchedules
	if opts.TrackSends {
		s.sends = newSendLog(cmp.Or(opts.tracked, trackedResponses))
	}
	errorLog := opts.ErrorLog
	if errorLog == nil {
		errorLog = log.New(io.Discard, "", 0)
	}

	ln, err := net.Listen("tcp", cmp.Or(opts.Listen, "127.0.0.1:0"))
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	s.url = "http://" + ln.Addr().String()
	if opts.TrackSends {
		ln = kstamp.Listen(ln) // Received: each request's arrival by the kernel's clock
	}
	s.http = &http.Server{
		Handler:           http.HandlerFunc(s.route),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          errorLog,
		ConnState:         s.trackConn,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, c)
		},
	}
	go func() {
		defer close(s.serveDone)
		_ = s.http.Serve(ln) // returns http.ErrServerClosed after Close
	}()
	return s, nil
}

// add serves one more profile: its backend, its GPU and per-profile metrics, and its place in
// /metrics unless NoMetrics.
func (s *Server) add(p Profile) (*endpoint, error) {
	p, err := p.normalized()
	if err != nil {
		return nil, err
	}
	s.endpointsMu.Lock()
	defer s.endpointsMu.Unlock()
	if _, dup := s.endpoints[p.Name]; dup {
		return nil, fmt.Errorf("duplicate profile %q", p.Name)
	}
	if s.maxProfiles > 0 && len(s.order) >= s.maxProfiles {
		return nil, fmt.Errorf("this server serves %d schedules already, the most it takes", maxSchedules)
	}
	ep := &endpoint{profile: p, modelJSON: jsonString(p.Model), rng: newRand(p.Seed), backend: newEngine(p),
		tok: tokensOf(p.Tokenizer)}
	if s.logRequests {
		ep.seen = &seenLog{}
	}
	if p.GPU.Count > 0 {
		if ep.gpuMetrics, err = newGPUHandler(ep); err != nil {
			return nil, err
		}
	}
	if !p.NoMetrics {
		engines := 0
		for _, other := range s.exposed {
			if other.profile.Model == p.Model {
				engines++
			}
		}
		ep.engineLabel = strconv.Itoa(engines)
		if ep.metrics, err = newMetricsHandler(func() []*endpoint { return []*endpoint{ep} }); err != nil {
			return nil, err
		}
		s.exposed = append(s.exposed, ep)
	}
	s.endpoints[p.Name] = ep
	s.order = append(s.order, ep)
	return ep, nil
}

// endpoint is the profile served under name.
func (s *Server) endpoint(name string) (*endpoint, bool) {
	s.endpointsMu.RLock()
	defer s.endpointsMu.RUnlock()
	ep, ok := s.endpoints[name]
	return ep, ok
}

// exposedEndpoints are the profiles /metrics reports now.
func (s *Server) exposedEndpoints() []*endpoint {
	s.endpointsMu.RLock()
	defer s.endpointsMu.RUnlock()
	return slices.Clone(s.exposed)
}

// URL returns the server's root, http://127.0.0.1:PORT.
func (s *Server) URL() string { return s.url }

// BaseURL returns the OpenAI base URL of a profile, http://127.0.0.1:PORT/<profile>/v1.
func (s *Server) BaseURL(profile string) string { return s.url + "/" + profile + "/v1" }

// Requests returns how many generation requests (any of the five APIs) a profile has received
// (any outcome, invalid ones included; model lists are not counted). Unknown profiles return 0.
func (s *Server) Requests(profile string) int64 {
	if ep, ok := s.endpoint(profile); ok {
		return ep.requests.Load()
	}
	return 0
}

// Close stops the server: it refuses new connections, aborts every in-flight stream (clients
// see the connection end without [DONE]), and returns once every connection goroutine is done.
// It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		_ = s.http.Close()
		<-s.serveDone
		s.connsWG.Wait()
	})
}

// newRand seeds a profile's generator; seed 0 means time-based.
func newRand(seed int64) *rand.Rand {
	s := uint64(seed)
	if seed == 0 {
		s = uint64(time.Now().UnixNano())
	}
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// trackConn counts open connections so Close can wait for their goroutines, and closes those
// marked by closeWhenIdle as soon as their response is complete.
func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	switch state {
	case http.StateNew:
		s.conns[c] = closing{}
		s.connsWG.Add(1)
	case http.StateIdle:
		// net/http goes idle after the response has been written and flushed, the chunked
		// body's terminator included: the client has a complete answer, then the FIN.
		switch cl := s.conns[c]; {
		case cl.close && cl.after > 0:
			cl.dying = true // a request arriving meanwhile is dropped (route)
			s.conns[c] = cl
			time.AfterFunc(cl.after, func() { _ = c.Close() })
		case cl.close:
			_ = c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		if _, ok := s.conns[c]; ok {
			delete(s.conns, c)
			s.connsWG.Done()
		}
	}
}

// connKey is the request context key of the request's net.Conn.
type connKey struct{}

// closing says whether a connection is closed once its response is complete, and how long
// after (Profile.CloseDelay).
type closing struct {
	close bool
	after time.Duration
	dying bool // its response is done: it closes after `after`, serving nothing more
}

// dying reports whether r came on a connection that is about to close.
func (s *Server) dying(r *http.Request) bool {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return s.conns[c].dying
}

// closeWhenIdle marks r's connection to be closed once its response is complete, after the
// given delay.
func (s *Server) closeWhenIdle(r *http.Request, after time.Duration) {
	c, _ := r.Context().Value(connKey{}).(net.Conn)
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if _, open := s.conns[c]; open {
		s.conns[c] = closing{close: true, after: after}
	}
}

// route dispatches /metrics, each API's path of a profile (apis.go), /<profile>/v1/models,
// /<profile>/api/tags and /api/version, and /<profile>/metrics.
func (s *Server) route(w http.ResponseWriter, r *http.Request) {
	if s.dying(r) {
		abort() // as a server that already closed it: no answer, the connection drops
	}
	select {
	case <-s.done:
		writeError(w, http.StatusServiceUnavailable, "simulator is shutting down", "server_error", "shutting_down")
		return
	default:
	}
	if r.URL.Path == "/metrics" {
		s.metrics.ServeHTTP(w, r)
		return
	}
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	ep, ok := s.endpoint(name)
	if !ok && s.serveRoot(w, r, name, rest) {
		return
	}
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no simulated profile %q", name), "invalid_request_error", "model_not_found")
		return
	}
	if api := apiOfPath(rest); api != "" {
		ep.requests.Add(1)
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeAPIError(w, api, http.StatusMethodNotAllowed, "use POST", "invalid_request_error", "method_not_allowed")
			return
		}
		s.serve(w, r, ep, api)
		return
	}
	switch rest {
	case "api/tags":
		ep.serveTags(w)
	case "api/version":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintln(w, `{"version":"0.17.4-sim"}`)
	case "gpu/metrics":
		ep.serveGPU(w, r)
	case "metrics":
		if ep.metrics == nil {
			writeError(w, http.StatusNotFound, fmt.Sprintf("profile %q exposes no metrics", name), "invalid_request_error", "not_found")
			return
		}
		ep.metrics.ServeHTTP(w, r)
	case "v1/models":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeError(w, http.StatusMethodNotAllowed, "use GET", "invalid_request_error", "method_not_allowed")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":%d,"owned_by":"tokscope-sim"}]}`+"\n",
			ep.modelJSON, time.Now().Unix())
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown path %q", r.URL.Path), "invalid_request_error", "not_found")
	}
}

// writeError writes an OpenAI-style JSON error body. code is a string or an integer.
func writeError(w http.ResponseWriter, status int, message, typ string, code any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":%s,"param":null,"code":%s}}`+"\n",
		jsonString(message), jsonString(typ), jsonValue(code))
}

// jsonString returns s as a JSON string literal.
func jsonString(s string) string { return jsonValue(s) }

func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// retryAfterSeconds rounds d up to whole seconds, as Retry-After requires.
func retryAfterSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
