package sim

import (
	"strconv"
	"time"
)

// The stream framing of each API (the shapes of the captures in
// ../shared/fixtures/servers/): what opens a stream, a token chunk, the end with its usage, a
// mid-stream error and a keep-alive. Every frame is written and flushed as one unit, and
// recorded in Sends: the opening events as FrameRole, token events as FrameReasoning /
// FrameContent, the end as FrameFinish (and FrameUsage for chat's and completions' usage
// chunk), an error as FrameError.
//
//	chat         as before
//	completions  text_completion chunks with choices[].text; finish chunk; usage chunk with
//	             "choices": [] when include_usage; [DONE]
//	responses    response.created + response.in_progress at the headers; output_text.delta /
//	             reasoning_text.delta; response.completed ("stop") or response.incomplete
//	             (max_output_tokens) with usage; response.failed
//	anthropic    message_start (+ ping) at the headers; content_block_start/stop around the
//	             thinking and text blocks; thinking_delta / text_delta; message_delta
//	             (stop_reason end_turn or max_tokens, usage) and message_stop; event: error
//	             overloaded_error; keep-alives are ping events
//	ollama       NDJSON, one line per token chunk (message.thinking / message.content), a
//	             done line with done_reason, eval_count, prompt_eval_count (the whole
//	             prompt, cached or not, as Ollama 0.17.4 counts it) and durations in ns;
//	             {"error": …}; no keep-alives

// newStreamWriter prepares the framing of c's API.
func newStreamWriter(c *call) *streamWriter {
	sw := &streamWriter{api: c.api, id: c.id, model: c.ep.modelJSON, usage: c.usage(0, 0, 0)}
	switch c.api {
	case APIChat:
		sw.head = []byte(`data: {"id":"` + c.id + `","object":"chat.completion.chunk","created":` +
			strconv.FormatInt(c.arrival.Unix(), 10) + `,"model":` + c.ep.modelJSON + `,"choices":`)
	case APICompletions:
		sw.head = []byte(`data: {"id":"` + c.id + `","object":"text_completion","created":` +
			strconv.FormatInt(c.arrival.Unix(), 10) + `,"model":` + c.ep.modelJSON + `,"choices":`)
	}
	sw.continuous = c.req.StreamOptions != nil && c.req.StreamOptions.ContinuousUsageStats
	sw.arrival = c.arrival
	openAI := c.api == APIChat || c.api == APICompletions
	sw.timings = c.ep.profile.Timings && (openAI || c.api == APIResponses)
	sw.metrics = c.ep.profile.VLLMMetrics && c.req.IncludeMetrics && openAI
	return sw
}

// contentType is the stream's media type.
func (sw *streamWriter) contentType() string {
	if sw.api == APIOllama {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

// open sends what the API sends right after the headers (chat: the role chunk, when asked).
func (sw *streamWriter) open(roleChunk bool) error {
	switch sw.api {
	case APIChat:
		if roleChunk {
			return sw.role()
		}
	case APIResponses:
		b := sw.respEvent(sw.buf[:0], "response.created", `"response":`+sw.respObject("in_progress", ""))
		b = sw.respEvent(b, "response.in_progress", `"response":`+sw.respObject("in_progress", ""))
		return sw.send(b, FrameRole, 0)
	case APIAnthropic:
		b := append(sw.buf[:0], "event: message_start\ndata: "...)
		b = append(b, `{"type":"message_start","message":{"id":"`+sw.id+`","type":"message","role":"assistant","content":[],"model":`+sw.model+
			`,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+strconv.Itoa(sw.usage.prompt)+`,"output_tokens":0}}}`+"\n\n"...)
		b = append(b, "event: ping\ndata: {\"type\": \"ping\"}\n\n"...)
		return sw.send(b, FrameRole, 0)
	}
	return nil
}

// phaseStart opens a new output block when the kind of tokens changes (Responses items,
// Anthropic content blocks), closing the previous one.
func (sw *streamWriter) phaseStart(b []byte, kind FrameKind) []byte {
	if sw.phase == kind {
		return b
	}
	b = sw.phaseEnd(b)
	sw.phase = kind
	idx := strconv.Itoa(sw.block)
	switch sw.api {
	case APIResponses:
		typ := `{"type":"message","id":"msg_` + idx + `","status":"in_progress","role":"assistant","content":[]}`
		if kind == FrameReasoning {
			typ = `{"type":"reasoning","id":"rs_` + idx + `","status":"in_progress","content":[]}`
		}
		b = sw.respEvent(b, "response.output_item.added", `"output_index":`+idx+`,"item":`+typ)
	case APIAnthropic:
		block := `{"type":"text","text":""}`
		if kind == FrameReasoning {
			block = `{"type":"thinking","thinking":""}`
		}
		b = append(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"+idx+",\"content_block\":"+block+"}\n\n"...)
	}
	return b
}

// phaseEnd closes the open output block, if any.
func (sw *streamWriter) phaseEnd(b []byte) []byte {
	if sw.phase == "" {
		return b
	}
	idx := strconv.Itoa(sw.block)
	switch sw.api {
	case APIResponses:
		b = sw.respEvent(b, "response.output_item.done", `"output_index":`+idx+`,"item":{"id":"item_`+idx+`","status":"completed"}`)
	case APIAnthropic:
		b = append(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"+idx+"}\n\n"...)
	}
	sw.phase = ""
	sw.block++
	return b
}

// apiTokens writes a token chunk of the APIs other than chat.
func (sw *streamWriter) apiTokens(kind FrameKind, first, n int) error {
	if sw.first.IsZero() {
		sw.first = time.Now()
	}
	b := sw.buf[:0]
	switch sw.api {
	case APICompletions:
		b = append(b, sw.head...)
		b = append(b, `[{"index":0,"text":"`...)
		b = appendWords(b, first, n)
		b = append(b, `","logprobs":null,"finish_reason":null}]`...)
		b = sw.endChunk(b)
	case APIResponses:
		b = sw.phaseStart(b, kind)
		name := "response.output_text.delta"
		if kind == FrameReasoning {
			name = "response.reasoning_text.delta"
		}
		b = append(b, "event: "+name+"\ndata: {\"type\":\""+name+"\",\"item_id\":\"item_"+strconv.Itoa(sw.block)+
			"\",\"output_index\":"+strconv.Itoa(sw.block)+",\"content_index\":0,\"delta\":\""...)
		b = appendWords(b, first, n)
		b = append(b, "\"}\n\n"...)
	case APIAnthropic:
		b = sw.phaseStart(b, kind)
		delta := `{"type":"text_delta","text":"`
		if kind == FrameReasoning {
			delta = `{"type":"thinking_delta","thinking":"`
		}
		b = append(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"+strconv.Itoa(sw.block)+",\"delta\":"+delta...)
		b = appendWords(b, first, n)
		b = append(b, "\"}}\n\n"...)
	case APIOllama:
		b = sw.ollamaHead(b)
		if kind == FrameReasoning {
			b = append(b, `"content":"","thinking":"`...)
		} else {
			b = append(b, `"content":"`...)
		}
		b = appendWords(b, first, n)
		b = append(b, "\"},\"done\":false}\n"...)
	}
	return sw.send(b, kind, n)
}

// endChunk closes a completions chunk, with the cumulative usage under continuous usage stats.
func (sw *streamWriter) endChunk(b []byte) []byte {
	if sw.continuous {
		b = append(b, `,"usage":`...)
		b = appendUsage(b, sw.usage)
	}
	return append(b, "}\n\n"...)
}

// apiEnd ends a stream of the APIs other than chat: finish "stop" or "length".
func (sw *streamWriter) apiEnd(finish string, includeUsage bool) error {
	b := sw.buf[:0]
	u := sw.usage
	switch sw.api {
	case APICompletions:
		b = append(b, sw.head...)
		b = append(b, `[{"index":0,"text":"","logprobs":null,"finish_reason":`+strconv.Quote(finish)+`}]`...)
		if b = sw.endChunk(b); !includeUsage {
			b = sw.withClock(b)
		}
		if err := sw.send(b, FrameFinish, 0); err != nil {
			return err
		}
		if includeUsage {
			b = append(append(sw.buf[:0], sw.head...), `[],"usage":`...)
			if err := sw.send(sw.withClock(append(appendUsage(b, u), "}\n\n"...)), FrameUsage, 0); err != nil {
				return err
			}
		}
		return sw.done()
	case APIResponses:
		b = sw.phaseEnd(b)
		name, status := "response.completed", "completed"
		if finish == "length" {
			name, status = "response.incomplete", "incomplete"
		}
		b = sw.withClock(sw.respEvent(b, name, `"response":`+sw.respObject(status, string(sw.respUsage()))))
	case APIAnthropic:
		b = sw.phaseEnd(b)
		reason := "end_turn"
		if finish == "length" {
			reason = "max_tokens"
		}
		b = append(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\""+reason+
			"\",\"stop_sequence\":null},\"usage\":{\"input_tokens\":"+strconv.Itoa(u.prompt-u.cached)...)
		if u.details {
			b = append(b, ",\"cache_read_input_tokens\":"+strconv.Itoa(u.cached)...)
		}
		b = append(b, ",\"output_tokens\":"+strconv.Itoa(u.completion)+"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	case APIOllama:
		b = sw.ollamaDone(sw.ollamaHead(b), finish)
	}
	return sw.send(b, FrameFinish, 0)
}

// apiFail writes a mid-stream error in the API's shape.
func (sw *streamWriter) apiFail() error {
	b := sw.buf[:0]
	switch sw.api {
	case APIResponses:
		b = sw.respEvent(b, "response.failed", `"response":{"id":"`+sw.id+`","object":"response","status":"failed","error":{"code":"server_error","message":"`+midStreamMessage+`"}}`)
	case APIAnthropic:
		b = append(b, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\""+midStreamMessage+"\"}}\n\n"...)
	case APIOllama:
		b = append(b, "{\"error\":\""+midStreamMessage+"\"}\n"...)
	default:
		b = append(b, `data: {"error":{"message":"`+midStreamMessage+`","type":"server_error","code":500}}`+"\n\n"...)
	}
	return sw.send(b, FrameError, 0)
}

// respEvent appends one Responses event: its type, fields (JSON members) and a sequence number.
func (sw *streamWriter) respEvent(b []byte, name, fields string) []byte {
	b = append(b, "event: "+name+"\ndata: {\"type\":\""+name+"\","+fields+",\"sequence_number\":"...)
	b = strconv.AppendInt(b, int64(sw.seq), 10)
	sw.seq++
	return append(b, "}\n\n"...)
}

func (sw *streamWriter) respObject(status, usage string) string {
	o := `{"id":"` + sw.id + `","object":"response","model":` + sw.model + `,"status":"` + status + `"`
	if status == "incomplete" {
		o += `,"incomplete_details":{"reason":"max_output_tokens"}`
	}
	if usage != "" {
		o += `,"usage":` + usage
	}
	return o + "}"
}

// respUsage is the Responses usage object (cached_tokens when the profile has a prefix cache).
func (sw *streamWriter) respUsage() []byte {
	u := sw.usage
	b := append([]byte(nil), `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10)
	if u.details {
		b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.cached), 10)
		b = append(b, '}')
	}
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.reasoning), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.prompt+u.completion), 10)
	return append(b, '}')
}

func (sw *streamWriter) ollamaHead(b []byte) []byte {
	b = append(b, `{"model":`+sw.model+`,"created_at":"`...)
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, `","message":{"role":"assistant",`...)
}

// ollamaDone ends the done line: the reason, the counts and the server's clock in ns (prompt
// evaluation from admission to the first token, evaluation from the first token to now).
func (sw *streamWriter) ollamaDone(b []byte, finish string) []byte {
	u, now := sw.usage, time.Now()
	first := sw.first
	if first.IsZero() {
		first = now
	}
	sw.last = now // Ollama's eval_duration runs to the done line
	sw.clock()
	b = append(b, `"content":""},"done":true,"done_reason":"`+finish+`","total_duration":`...)
	b = strconv.AppendInt(b, int64(now.Sub(sw.admitted)), 10)
	b = append(b, `,"load_duration":0,"prompt_eval_count":`...)
	b = strconv.AppendInt(b, int64(u.prompt), 10) // Ollama 0.17.4: the whole prompt, however much was cached
	b = append(b, `,"prompt_eval_duration":`...)
	b = strconv.AppendInt(b, int64(first.Sub(sw.admitted)), 10)
	b = append(b, `,"eval_count":`...)
	b = strconv.AppendInt(b, int64(u.completion), 10)
	b = append(b, `,"eval_duration":`...)
	b = strconv.AppendInt(b, int64(now.Sub(first)), 10)
	return append(b, "}\n"...)
}
