package promexport

import (
	"testing"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/sample/sampletest"
)

// tokscope_endpoint_info says each endpoint's API, at 1, from the first scrape: a configured
// endpoint's from its config ("" is chat), one the exporter first meets in a Sample from the
// Sample; no other series gains an api label.
func TestEndpointInfoNamesTheAPI(t *testing.T) {
	eps := testEndpoints()
	eps[1].API = config.APIAnthropic
	e := New(eps)
	url := serve(t, e)
	fams := scrape(t, url)
	for _, c := range []struct{ name, model, api string }{{"local", "m1", "chat"}, {"remote", "m2", "anthropic"}} {
		m := series(t, fams, nameInfo, map[string]string{labelEndpoint: c.name, labelModel: c.model, labelAPI: c.api})
		if v := m.GetGauge().GetValue(); v != 1 {
			t.Errorf("%s info = %v, want 1", c.name, v)
		}
	}
	if n := len(fams[nameInfo].GetMetric()); n != 2 {
		t.Errorf("%d info series before any request, want 2", n)
	}

	s := sampletest.OK("extra", "m1", 1, time.Time{}).Times(0, 10*ms).Role(11*ms).ChunksAt(3, 20*ms, 30*ms).
		Tokens(2, sample.SourceUsage).EndAt(40 * ms).Ptr()
	s.API = config.APIOllama
	e.Observe(s)
	remote := sampletest.OK("remote", "m1", 1, time.Time{}).Times(0, 10*ms).Role(11*ms).
		ChunksAt(3, 20*ms, 30*ms).Tokens(2, sample.SourceUsage).EndAt(40 * ms).Ptr()
	remote.Model, remote.API = "m2", config.APIAnthropic
	e.Observe(remote)
	fams = scrape(t, url)
	series(t, fams, nameInfo, map[string]string{labelEndpoint: "extra", labelModel: "m1", labelAPI: "ollama"})
	if n := len(fams[nameInfo].GetMetric()); n != 3 {
		t.Errorf("%d info series, want 3 (one per endpoint)", n)
	}
	for name, mf := range fams {
		if name == nameInfo {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == labelAPI {
					t.Errorf("%s has an api label: only %s should", name, nameInfo)
				}
			}
		}
	}
}
