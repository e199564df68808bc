package config

import (
	"net/url"
	"strconv"
	"strings"
)

// Default names. A name must tell endpoints apart in a card title or a table column, so it
// keeps what differs between them and drops what they share: its model when no other endpoint
// has that model; else, among the unnamed endpoints with that model, the parts that differ —
// the host (host:port, with the path when two share a host), then the API:
//
//	-u H -m m                                      m
//	-u H -m m -u H -m m --api chat,anthropic       chat, anthropic   (host and model shared by all)
//	-u H -m a -u H -m b -u H -m b --api …          a, b chat, b anthropic
//	-u http://a:1/v1 -m m -u http://b:1/v1 -m m    a:1/m, b:1/m      (a host is kept with its model)
//	the same endpoint twice                        h:1/m, h:1/m#2
//
// "#2", "#3"... are added when the name is taken. Explicit names are reserved first, so a
// default name never collides with one, and are never changed.

// assignNames names every unnamed endpoint (see above).
func assignNames(eps []Endpoint) {
	taken := make(map[string]bool)
	models := make(map[string]int)
	for _, e := range eps {
		if e.Name != "" {
			taken[e.Name] = true
		}
		models[e.Model]++
	}
	groups := make(map[string][]int) // unnamed endpoints by model
	for i, e := range eps {
		if e.Name == "" {
			groups[e.Model] = append(groups[e.Model], i)
		}
	}
	next := make(map[string]int) // next suffix to try per base name: linear, not quadratic
	for i := range eps {
		if eps[i].Name != "" {
			continue
		}
		base := eps[i].Model
		if models[base] > 1 || strings.TrimSpace(base) == "" {
			base = distinctName(eps, groups[eps[i].Model], i, models[eps[i].Model] == len(eps))
		}
		name := base
		for taken[name] {
			next[base] = max(next[base], 2)
			name = base + "#" + strconv.Itoa(next[base])
			next[base]++
		}
		taken[name] = true
		eps[i].Name = name
	}
}

// distinctName is the name of eps[i] among group (the unnamed endpoints with its model): the
// parts in which the group differs. everyone says that every endpoint of the run has this
// model, so that the model can be left out. A group that differs in nothing (or only in
// what a name does not show) is named host:port/model.
func distinctName(eps []Endpoint, group []int, i int, everyone bool) string {
	hosts, wheres, apis := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, j := range group {
		h, w := location(eps[j].BaseURL)
		hosts[h], wheres[w], apis[apiOf(eps[j])] = true, true, true
	}
	host, where := location(eps[i].BaseURL)
	if len(wheres) > len(hosts) { // two share a host: the path tells them apart
		host = where
	}
	var parts []string
	switch {
	case len(wheres) > 1:
		parts = append(parts, host+"/"+eps[i].Model)
	case !everyone && len(apis) > 1:
		parts = append(parts, eps[i].Model)
	}
	if len(apis) > 1 {
		parts = append(parts, apiOf(eps[i]))
	}
	if len(parts) == 0 || strings.TrimSpace(eps[i].Model) == "" && len(wheres) < 2 {
		return host + "/" + eps[i].Model
	}
	return strings.Join(parts, " ")
}

// location is a base URL's host (host:port when it gives a port) and that host with the path
// (trailing slash trimmed); the URL itself when it does not parse.
func location(baseURL string) (host, where string) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return baseURL, baseURL
	}
	return u.Host, u.Host + strings.TrimRight(u.Path, "/")
}

func apiOf(e Endpoint) string {
	if e.API == "" {
		return DefaultAPI
	}
	return e.API
}
