package probe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"tokscope/apiwire"
	"tokscope/sample"

	"tokscope/config"
)

// apiStream is a benchChunks-token answer in an API's framing, as llama-server and Ollama
// send it (testdata/captures), and the events the engine records of it.
func apiStream(api string, n int) (body []byte, events int) {
	var b bytes.Buffer
	switch api {
	case config.APICompletions:
		const head = `data: {"id":"cmpl-8f2a1c7e9b3d4e5f","object":"text_completion","created":1718000000,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"text":`
		for i := range n {
			fmt.Fprintf(&b, head+`" word%d","logprobs":null,"finish_reason":null}]}`+"\n\n", i%100)
		}
		b.WriteString(head + `"","logprobs":null,"finish_reason":"length"}]}` + "\n\n")
		fmt.Fprintf(&b, `data: {"id":"cmpl-8f2a1c7e9b3d4e5f","object":"text_completion","created":1718000000,"model":"m","choices":[],"usage":{"prompt_tokens":20,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", n+20, n)
		b.WriteString("data: [DONE]\n\n")
		return b.Bytes(), n + 2
	case config.APIResponses:
		ev := func(name, fields string, seq int) {
			fmt.Fprintf(&b, "event: %s\ndata: {\"type\":\"%s\",%s,\"sequence_number\":%d}\n\n", name, name, fields, seq)
		}
		ev("response.created", `"response":{"id":"resp_1","object":"response","status":"in_progress"}`, 0)
		ev("response.in_progress", `"response":{"id":"resp_1","object":"response","status":"in_progress"}`, 1)
		ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`, 2)
		for i := range n {
			ev("response.output_text.delta", fmt.Sprintf(`"item_id":"msg_1","output_index":0,"content_index":0,"delta":" word%d","logprobs":[]`, i%100), 3+i)
		}
		ev("response.output_item.done", `"output_index":0,"item":{"id":"msg_1","status":"completed"}`, n+3)
		ev("response.completed", fmt.Sprintf(`"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":20,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`, n, n+20), n+4)
		return b.Bytes(), n + 5
	case config.APIAnthropic:
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n")
		b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		for i := range n {
			fmt.Fprintf(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" word%d\"}}\n\n", i%100)
		}
		b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
		fmt.Fprintf(&b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":%d}}\n\n", n)
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		return b.Bytes(), n + 5
	}
	for i := range n {
		fmt.Fprintf(&b, `{"model":"m","created_at":"2026-11-24T13:52:01.760965028Z","message":{"role":"assistant","content":" word%d"},"done":false}`+"\n", i%100)
	}
	fmt.Fprintf(&b, `{"model":"m","created_at":"2026-11-24T13:52:01.7754146Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":18613273,"load_duration":2793584,"prompt_eval_count":20,"prompt_eval_duration":503359,"eval_count":%d,"eval_duration":13951762}`+"\n", n)
	return b.Bytes(), n + 1
}

// BenchmarkAPIChunkOverhead prices each API's decoder as BenchmarkChunkOverhead prices chat's:
// "bare" reads the same in-memory answer over the same HTTP client with a plain line loop
// (the least any client does); "engine" is SendLive as a run calls it (read, stamp, decode,
// account, a Progress at the first token and every ProgressEvery, the Sample). The difference
// of the two ns/chunk is the decoder's cost per chunk.
func BenchmarkAPIChunkOverhead(b *testing.B) {
	WarmTokenizer()
	for _, api := range []string{config.APICompletions, config.APIResponses, config.APIAnthropic, config.APIOllama} {
		body, chunks := apiStream(api, benchChunks)
		ep := config.Endpoint{Name: "bench", BaseURL: "http://mem/v1", Model: "m", Prompt: "hi", MaxTokens: benchChunks,
			API: api, Timeout: time.Minute, Stall: time.Minute}
		b.Run(api+"/bare", func(b *testing.B) {
			hc := &http.Client{Transport: memStream{body}}
			url := apiwire.Of(ep).URL(ep.BaseURL)
			perChunk(b, chunks, func() {
				resp, err := hc.Post(url, "application/json", strings.NewReader(`{"model":"m","stream":true}`))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				sc := bufio.NewReaderSize(resp.Body, 16<<10)
				for {
					line, err := sc.ReadSlice('\n')
					if err != nil {
						break
					}
					if bytes.HasPrefix(line, []byte("data:")) || line[0] == '{' {
						n++
					}
				}
				resp.Body.Close()
				if n < chunks {
					b.Fatalf("%d events", n)
				}
			})
		})
		b.Run(api+"/engine", func(b *testing.B) {
			var progress int
			perChunk(b, chunks, func() {
				s := ask(context.Background(), memClient(ep, memStream{body}), "hi", Live{Progress: func(p *sample.Progress) { progress += p.Chunks }})
				if s.Outcome != sample.OutcomeOK || s.Tokens != benchChunks || len(s.Chunks) != chunks {
					b.Fatalf("%s %s: N %d chunks %d", s.Outcome, s.ErrorMessage, s.Tokens, len(s.Chunks))
				}
			})
		})
	}
}
