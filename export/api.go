package export

import "tokscope/config"

// APILabel is how the table, the cards and the report name an endpoint's API beside its
// model: "api anthropic", or "" for chat (the default, and every endpoint before --api), so
// that a run of chat endpoints looks as it always did. JSON and CSV always carry "api".
func APILabel(api string) string {
	if api == "" || api == config.DefaultAPI {
		return ""
	}
	return "api " + api
}

// apiName is the "api" of JSON and CSV: "" (a snapshot built by hand, without one) is chat,
// as the probe reads it.
func apiName(api string) string {
	if api == "" {
		return config.DefaultAPI
	}
	return api
}
