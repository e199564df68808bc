package config

import (
	"slices"
	"testing"
)

// TestDefaultNamesKeepWhatDiffers: a default name keeps the part that tells an endpoint from
// the others (API, host, model) and drops what they all share; a given name is kept as given.
func TestDefaultNamesKeepWhatDiffers(t *testing.T) {
	ep := func(url, model, api, name string) Endpoint {
		e := NewEndpoint(url, model)
		e.API, e.Name = api, name
		return e
	}
	const h = "http://127.0.0.1:8084/v1"
	tests := []struct {
		name string
		eps  []Endpoint
		want []string
	}{
		{"one endpoint: its model", []Endpoint{ep(h, "m", "", "")}, []string{"m"}},
		{"same host and model, two APIs: the API alone",
			[]Endpoint{ep(h, "random-medium", "chat", ""), ep(h, "random-medium", "anthropic", "")},
			[]string{"chat", "anthropic"}},
		{"the default API counts as chat",
			[]Endpoint{ep(h, "m", "", ""), ep(h, "m", "responses", "")},
			[]string{"chat", "responses"}},
		{"two hosts, one model: host and model",
			[]Endpoint{ep("http://host-a:8000/v1", "m", "", ""), ep("http://host-b:8000/v1", "m", "", "")},
			[]string{"host-a:8000/m", "host-b:8000/m"}},
		{"a model of its own stays the model; the shared one adds the API",
			[]Endpoint{ep(h, "a", "", ""), ep(h, "b", "chat", ""), ep(h, "b", "anthropic", "")},
			[]string{"a", "b chat", "b anthropic"}},
		{"host and API both differ",
			[]Endpoint{ep("http://a:1/v1", "m", "chat", ""), ep("http://b:1/v1", "m", "anthropic", "")},
			[]string{"a:1/m chat", "b:1/m anthropic"}},
		{"one host, two paths: the path tells them apart",
			[]Endpoint{ep("http://h:1/x/v1", "m", "", ""), ep("http://h:1/y/v1/", "m", "", "")},
			[]string{"h:1/x/v1/m", "h:1/y/v1/m"}},
		{"the same endpoint twice: numbered",
			[]Endpoint{ep(h, "m", "", ""), ep(h, "m", "", "")},
			[]string{"127.0.0.1:8084/m", "127.0.0.1:8084/m#2"}},
		{"given names stay, defaults step around them",
			[]Endpoint{ep(h, "m", "chat", "chat"), ep(h, "m", "chat", ""), ep(h, "m", "anthropic", "")},
			[]string{"chat", "chat#2", "anthropic"}},
		{"a default name equal to a given one is numbered",
			[]Endpoint{ep(h, "m", "chat", ""), ep(h, "m", "anthropic", ""), ep(h, "z", "", "chat")},
			[]string{"m chat", "m anthropic", "chat"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{Endpoints: tt.eps}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range c.Endpoints {
				got = append(got, e.Name)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("names = %q, want %q", got, tt.want)
			}
		})
	}
}
