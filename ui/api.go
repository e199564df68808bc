package ui

import (
	"tokscope/config"
	"tokscope/stats"
)

// The wire protocol of an endpoint, where the views show it: beside the model on a card and
// in the detail view's title, in a column of its own in the compare table. Chat, the
// default, is not named, so a run of chat endpoints looks as it always did.

// apiTag is " · anthropic" for an endpoint that does not speak chat, "" for chat.
func apiTag(api string) string {
	if api == "" || api == config.DefaultAPI {
		return ""
	}
	return " · " + api
}

// apiColumnWidth is the width of the compare table's api column: the longest API name, or 0
// (no column) when every endpoint speaks chat.
func apiColumnWidth(eps []stats.EndpointStats) int {
	w := 0
	for i := range eps {
		if apiTag(eps[i].API) != "" {
			w = 3 // the title
			break
		}
	}
	if w == 0 {
		return 0
	}
	for i := range eps {
		w = max(w, len(eps[i].API))
	}
	return w
}
