package sim

import "time"

// Accessors only the simulator's own tests read: other packages check ground truth through
// Sends, Arrival, Received, Clock, Requests and the rest of server.go, sends.go and gpu.go.

// Word returns the text of token i of a simulated output (reasoning first, then the answer).
func Word(i int) string { return words[i%len(words)] }

// SendTimes returns, for a streamed response id (the chunk "id", e.g. "chatcmpl-sim-42"), the
// time.Now() taken right after each data frame was written and flushed, in order: role,
// reasoning, content, finish, usage and error frames, but not keep-alive comments nor
// "data: [DONE]". It returns nil when Options.TrackSends is off or the id is unknown or
// forgotten (only the last 10000 responses are kept). A stream still in flight returns the
// frames sent so far.
func (s *Server) SendTimes(id string) []time.Time {
	sends := s.Sends(id)
	if sends == nil {
		return nil
	}
	times := make([]time.Time, len(sends))
	for i, f := range sends {
		times[i] = f.At
	}
	return times
}

// MetricsURL returns the server's Prometheus exposition, http://127.0.0.1:PORT/metrics: the
// series of every profile without NoMetrics, told apart by their model_name label.
func (s *Server) MetricsURL() string { return s.url + "/metrics" }

// State returns a profile's serving state now (what /metrics reports, NoMetrics or not), and
// false for an unknown profile.
func (s *Server) State(profile string) (State, bool) {
	ep, ok := s.endpoint(profile)
	if !ok {
		return State{}, false
	}
	return ep.backend.state(), true
}
