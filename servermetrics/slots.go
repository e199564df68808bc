package servermetrics

import (
	"encoding/json"
	"errors"
)

// slot is the part of one llama.cpp /slots entry tokscope reads. Builds differ: is_processing
// (recent) or state (older, 0 = idle); next_token as a list (recent) or one object (older).
type slot struct {
	IsProcessing *bool           `json:"is_processing"`
	State        *int            `json:"state"`
	NextToken    json.RawMessage `json:"next_token"`
}

type nextToken struct {
	NDecoded float64 `json:"n_decoded"`
}

// decodedInSlots sums n_decoded over the busy slots of a llama.cpp /slots answer: the tokens
// the requests in flight have generated so far, which llamacpp:tokens_predicted_total counts
// only when each request ends.
func decodedInSlots(body []byte) (float64, error) {
	var slots []slot
	if err := json.Unmarshal(body, &slots); err != nil {
		return 0, errors.New("unreadable /slots")
	}
	var sum float64
	for _, s := range slots {
		busy := s.IsProcessing != nil && *s.IsProcessing || s.IsProcessing == nil && s.State != nil && *s.State != 0
		if !busy {
			continue
		}
		var list []nextToken
		if err := json.Unmarshal(s.NextToken, &list); err != nil {
			var one nextToken
			if json.Unmarshal(s.NextToken, &one) == nil {
				list = []nextToken{one}
			}
		}
		for _, nt := range list {
			if nt.NDecoded > 0 {
				sum += nt.NDecoded
			}
		}
	}
	return sum, nil
}
