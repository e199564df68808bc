package config

import (
	"strings"
	"testing"
)

func TestParseTier(t *testing.T) {
	tier, err := ParseTierFlag("fast = otps.p25>=30, ttft.P90 <= 15s,itl.p99.9=<200ms")
	if err != nil {
		t.Fatal(err)
	}
	want := []TierObjective{
		{Text: "otps.p25>=30", Metric: "otps", Percentile: 25, AtLeast: true, Bound: "30"},
		{Text: "ttft.P90 <= 15s", Metric: "ttft", Percentile: 90, Bound: "15s"},
		{Text: "itl.p99.9=<200ms", Metric: "itl", Percentile: 99.9, Bound: "200ms"},
	}
	if tier.Name != "fast" || len(tier.Objectives) != len(want) {
		t.Fatalf("%+v", tier)
	}
	for i, o := range tier.Objectives {
		if o != want[i] {
			t.Errorf("objective %d: %+v, want %+v", i, o, want[i])
		}
	}
	for _, c := range []struct{ in, want string }{
		{"fast", "give NAME=OBJECTIVES"},
		{"fa st=otps.p25>=1", "tier name"},
		{"fast=", "has no objectives"},
		{"fast=otps.p0>=1", "is not a percentile"},
		{"fast=otps.p101>=1", "is not a percentile"},
		{"fast=otps.p50=1", "not ="},
		{"fast=otps.p50>=", "has no bound after >="},
		{"fast=otps.p50>=1,,ttft.p90<=1s", "is not METRIC.pQ>=BOUND"},
	} {
		if _, err := ParseTierFlag(c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// tiers: in a config: in the order written, each objective at its place; bad ones refused at
// file:line:col.
func TestLoadTiers(t *testing.T) {
	const eps = "endpoints:\n  - base_url: http://127.0.0.1:1/v1\n    model: m\n"
	cfg, err := Parse("c.yaml", []byte(eps+"tiers:\n  slow: ttft.p90<=15s\n  fast: 'otps.p25>=100,  ttft.p90<=15s'\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Tiers) != 2 || cfg.Tiers[0].Name != "slow" || cfg.Tiers[1].Name != "fast" {
		t.Fatalf("%+v", cfg.Tiers)
	}
	if o := cfg.Tiers[1].Objectives[1]; o.File != "c.yaml" || o.Line != 6 || o.Col != 26 || !strings.Contains(o.Snippet, "^") {
		t.Errorf("second objective of fast at %s:%d:%d, want c.yaml:6:26", o.File, o.Line, o.Col)
	}
	for _, c := range []struct{ src, want string }{
		{"tiers:\n  fast: otps.p25>100\n", `c.yaml:5:9: tiers: tier fast: "otps.p25>100": the bound is >=`},
		{"tiers:\n  fast: [otps.p25>=100]\n", "c.yaml:5:9: fast must be a string, got a list"},
		{"tiers: {}\n", "c.yaml:4:8: tiers is empty"},
		{"teirs:\n  fast: otps.p25>=100\n", `did you mean "tiers"?`},
	} {
		if _, err := Parse("c.yaml", []byte(eps+c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.src, err, c.want)
		}
	}
}
