package sim

import (
	"math"
	"strconv"
	"time"
)

// The server's own clock, as real servers report it per request (docs/server-side.md, "The
// server's own clock"), following the simulator's schedule:
//
//	llama.cpp `timings` (Profile.Timings; chat and completions on the last chunk, Responses on
//	  response.completed): prompt_ms = admission to the first token (a wait for a batch slot
//	  excluded, as llama.cpp's excludes the wait for a slot), predicted_ms = first to last
//	  token, predicted_n, prompt_n = prompt − cached, cache_n = cached (with PrefixCache);
//	vLLM `metrics` (Profile.VLLMMetrics, only when the request says "include_metrics": true;
//	  chat and completions): time_to_first_token_ms = arrival to the first token (queueing
//	  included), queue_time_ms = arrival to the backend's admission (a batch slot: Clock.Scheduled),
//	  generation_time_ms = first to last
//	  token, mean_itl_ms and tokens_per_second = (n − 1) over it;
//	Ollama's done line (always): load_duration (Profile.ModelLoad on the profile's first
//	  request, else 0), prompt_eval_duration = admission to the first token less the load,
//	  eval_duration = first to last token, in ns.
//
// Milliseconds are written with 3 decimals (llama.cpp's own precision); Clock gives the
// instants they came from.

// Clock is the server's clock of one response: the instants its reported figures are made of.
// Scheduled is when the backend gave the request a batch slot (arrival when one was free);
// Admitted when its prefill began (after the headers went out and the slot was there).
type Clock struct {
	Arrival, Scheduled, Admitted, First, Last time.Time
	Load                                      time.Duration // Ollama's load_duration (Profile.ModelLoad)
	Completion, Prompt, Cached                int           // output tokens, prompt tokens, cached of them
}

// Clock returns the clock of a streamed response id once its stream ended (Options.TrackSends).
func (s *Server) Clock(id string) (Clock, bool) {
	if s.sends == nil {
		return Clock{}, false
	}
	rec := s.sends.get(id)
	if rec == nil {
		return Clock{}, false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.clock, rec.clockSet
}

// IncludeMetricsSeen returns how many requests of a profile asked for vLLM's per-request
// metrics ("include_metrics" in the body), whether or not the profile answers them.
func (s *Server) IncludeMetricsSeen(profile string) int64 {
	if ep, ok := s.endpoint(profile); ok {
		return ep.metricsAsked.Load()
	}
	return 0
}

// ms3 is d in milliseconds with 3 decimals.
func ms3(d time.Duration) string {
	return strconv.FormatFloat(math.Round(float64(d)/1e3)/1e3, 'f', 3, 64)
}

// clock is the stream's clock now that its last token went out, kept for Server.Clock.
func (sw *streamWriter) clock() Clock {
	first, last := sw.first, sw.last
	if first.IsZero() {
		first, last = time.Now(), time.Now()
	}
	c := Clock{Arrival: sw.arrival, Scheduled: sw.scheduled, Admitted: sw.admitted, First: first, Last: last, Load: sw.load,
		Completion: sw.usage.completion, Prompt: sw.usage.prompt, Cached: sw.usage.cached}
	if sw.record != nil {
		sw.record.mu.Lock()
		sw.record.clock, sw.record.clockSet = c, true
		sw.record.mu.Unlock()
	}
	return c
}

// appendTimings appends `,"timings":{…}` (llama.cpp's) when the profile reports them.
func (sw *streamWriter) appendTimings(b []byte) []byte {
	if !sw.timings {
		return b
	}
	c := sw.clock()
	b = append(b, `,"timings":{"cache_n":`+strconv.Itoa(c.Cached)+`,"prompt_n":`+strconv.Itoa(c.Prompt-c.Cached)...)
	b = append(b, `,"prompt_ms":`+ms3(c.First.Sub(c.Admitted))...)
	b = append(b, `,"predicted_n":`+strconv.Itoa(c.Completion)+`,"predicted_ms":`+ms3(c.Last.Sub(c.First))+`}`...)
	return b
}

// appendMetrics appends `,"metrics":{…}` (vLLM's) when the profile is vLLM-style and the
// request asked for them.
func (sw *streamWriter) appendMetrics(b []byte) []byte {
	if !sw.metrics {
		return b
	}
	c := sw.clock()
	gen := c.Last.Sub(c.First)
	itl, tps := "0.000", "0.000"
	if c.Completion > 1 && gen > 0 {
		itl = ms3(gen / time.Duration(c.Completion-1))
		tps = strconv.FormatFloat(math.Round(float64(c.Completion-1)/gen.Seconds()*1000)/1000, 'f', 3, 64)
	}
	b = append(b, `,"metrics":{"time_to_first_token_ms":`+ms3(c.First.Sub(c.Arrival))...)
	b = append(b, `,"generation_time_ms":`+ms3(gen)+`,"queue_time_ms":`+ms3(max(c.Scheduled.Sub(c.Arrival), 0))...)
	return append(b, `,"mean_itl_ms":`+itl+`,"tokens_per_second":`+tps+`}`...)
}

// withClock inserts the clock's objects before the closing brace of a JSON data frame
// ending in "}\n\n".
func (sw *streamWriter) withClock(frame []byte) []byte {
	if !sw.timings && !sw.metrics {
		return frame
	}
	n := len(frame) - len("}\n\n")
	tail := append([]byte(nil), frame[n:]...)
	b := sw.appendMetrics(sw.appendTimings(frame[:n]))
	return append(b, tail...)
}
