package watch

import (
	"context"
	"errors"
	"time"

	"tokscope/config"
	"tokscope/probe"
	"tokscope/workload"
)

// The canary is the one request watch sends, and only when the user asks (a key in the
// fleet table's drill-down): a single short streamed chat completion, measured by tokscope's
// own client, shown beside what the server reports, so one screen has both what the server
// says and what a client gets.

// CanaryMaxTokens is the canary's answer length: long enough for a decode rate.
const CanaryMaxTokens = 16

// CanaryTimeout bounds the canary: a busy CPU server may take a minute over a short answer.
const CanaryTimeout = 3 * time.Minute

// CanaryResult is one canary request's figures. Absent figures are nil.
type CanaryResult struct {
	Target string    `json:"target"`
	Model  string    `json:"model"`
	At     time.Time `json:"at"`
	Error  string    `json:"error,omitempty"`
	// The client's measurement (tokscope's definitions).
	TTFTms    *float64 `json:"ttft_ms"`
	DecodeTPS *float64 `json:"decode_tps"`
	Tokens    int      `json:"tokens"`
	// The server's own clock for the same request (llama.cpp timings, Ollama durations).
	ServerTTFTms    *float64 `json:"server_ttft_ms"`
	ServerDecodeTPS *float64 `json:"server_decode_tps"`
}

// Canary sends one chat request to the target's OpenAI API (origin + /v1) for model (the
// server's first listed model when ""), and returns its figures. It is bounded by ctx and
// CanaryTimeout.
func Canary(ctx context.Context, t Target, model string) CanaryResult {
	res := CanaryResult{Target: t.Key(), Model: model, At: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, CanaryTimeout)
	defer cancel()
	base := t.URL + "/v1"
	if model == "" {
		m, err := firstModel(ctx, base)
		if err != nil {
			res.Error = "no model to ask: " + err.Error()
			return res
		}
		model = m
	}
	res.Model = model
	ep := config.NewEndpoint(base, model)
	ep.Name, ep.MaxTokens, ep.Timeout = "canary", CanaryMaxTokens, CanaryTimeout
	client := probe.NewClient(ep)
	defer client.CloseIdleConnections()
	s := client.SendLive(ctx, workload.Request{
		Messages:  []workload.Message{{Role: "user", Content: "Write one sentence about the sea."}},
		MaxTokens: ep.MaxTokens,
	}, probe.Live{})
	if s.Failed() {
		res.Error = s.ErrorKind
		if s.ErrorMessage != "" {
			res.Error += ": " + s.ErrorMessage
		}
		return res
	}
	res.Tokens = s.Tokens
	if d, ok := s.TTFT(); ok {
		res.TTFTms = num(float64(d) / float64(time.Millisecond))
	}
	if r, ok := s.DecodeRate(); ok {
		res.DecodeTPS = num(r)
	}
	if st := s.Server; st != nil {
		if st.TTFTms >= 0 {
			res.ServerTTFTms = num(float64(st.TTFTms))
		}
		if r, ok := st.DecodeRate(); ok {
			res.ServerDecodeTPS = num(r)
		}
	}
	return res
}

// firstModel is the first model of an OpenAI /models list.
func firstModel(ctx context.Context, base string) (string, error) {
	s := NewScraper(Options{})
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := s.getJSON(ctx, base+"/models", &list); err != nil {
		return "", err
	}
	if len(list.Data) == 0 {
		return "", errors.New("the server lists none")
	}
	return list.Data[0].ID, nil
}
