package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSLOAndPriceParse(t *testing.T) {
	src := `defaults:
  slo: {ttft: 500ms, itl: 200ms}
  price: {input: 0.15, output: 0.6}
endpoints:
  - name: a
    base_url: http://127.0.0.1:8080/v1
    model: m
    slo: {ttft: 1s, e2e: 20s}
  - name: b
    base_url: http://127.0.0.1:8000/v1
    model: m
    price: {gpu_hour: 2}
  - name: c
    base_url: http://127.0.0.1:8001/v1
    model: m
    price: {output: 1}
`
	c, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	a, b, cc := c.Endpoints[0], c.Endpoints[1], c.Endpoints[2]
	if want := (SLO{TTFT: time.Second, E2E: 20 * time.Second, ITL: 200 * time.Millisecond}); a.SLO != want {
		t.Errorf("a: slo %+v, want the defaults' with the endpoint's keys laid over %+v", a.SLO, want)
	}
	if want := (SLO{TTFT: 500 * time.Millisecond, ITL: 200 * time.Millisecond}); b.SLO != want {
		t.Errorf("b: slo %+v, want the defaults' %+v", b.SLO, want)
	}
	if a.Price == nil || *a.Price != (Price{Input: 0.15, Output: 0.6}) {
		t.Errorf("a: price %+v", a.Price)
	}
	if b.Price == nil || *b.Price != (Price{GPUHour: 2}) || !b.Price.PerGPUHour() {
		t.Errorf("b: price %+v: an endpoint's price replaces the defaults' whole", b.Price)
	}
	if cc.Price == nil || *cc.Price != (Price{Output: 1}) {
		t.Errorf("c: price %+v", cc.Price)
	}
	if a.Price == c.Endpoints[1].Price {
		t.Error("endpoints share a price")
	}
	if got := a.SLO.String(); got != "ttft=1s,e2e=20s,itl=200ms" {
		t.Errorf("String() = %q", got)
	}
}

func TestSLOAndPriceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
		msg       string
	}{
		{"unknown objective", ep + "    slo: {ttfb: 1s}\n", 4, 11, `slo: unknown key "ttfb"; did you mean "ttft"?`},
		{"bare number", ep + "    slo: {ttft: 500}\n", 4, 17, "ttft needs a unit"},
		{"zero", ep + "    slo: {e2e: 0s}\n", 4, 16, "e2e must be greater than 0"},
		{"not a duration", ep + "    slo: {tpot: fast}\n", 4, 17, "tpot must be a duration"},
		{"slo a list", ep + "    slo: [1s]\n", 4, 10, "slo must be a mapping"},
		{"price both kinds", ep + "    price: {output: 1, gpu_hour: 2}\n", 4, 12, "not both"},
		{"price unknown key", ep + "    price: {outptu: 1}\n", 4, 13, `did you mean "output"?`},
		{"price negative", ep + "    price: {input: -1}\n", 4, 20, "≥ 0"},
		{"price a string", ep + "    price: {output: \"$1\"}\n", 4, 21, "must be a number of USD"},
		{"price empty", ep + "    price: {}\n", 4, 12, "price is empty"},
		{"price in defaults checked", "defaults:\n  price: {gpu_hour: x}\n" + ep, 2, 21, "must be a number of USD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.src))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Parse = %+v, %v; want a *config.Error", c, err)
			}
			if ce.Line != tc.line || ce.Col != tc.col || !strings.Contains(ce.Msg, tc.msg) {
				t.Fatalf("got %d:%d %q, want %d:%d containing %q", ce.Line, ce.Col, ce.Msg, tc.line, tc.col, tc.msg)
			}
		})
	}
}

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SLO
		err  string
	}{
		{"ttft=500ms,tpot=50ms,e2e=20s,itl=200ms", SLO{500 * time.Millisecond, 50 * time.Millisecond, 20 * time.Second, 200 * time.Millisecond}, ""},
		{" TTFT = 1s ", SLO{TTFT: time.Second}, ""},
		{"", SLO{}, "empty"},
		{"ttft", SLO{}, "not key=duration"},
		{"ttfb=1s", SLO{}, `unknown objective "ttfb"`},
		{"ttft=1s,ttft=2s", SLO{}, "given twice"},
		{"tpot=fast", SLO{}, "must be a duration"},
		{"e2e=-1s", SLO{}, "must not be negative"},
		{"itl=0s", SLO{}, "must be greater than 0"},
	} {
		got, err := ParseSLO(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseSLO(%q) error %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestApplySLOOverride(t *testing.T) {
	c := &Config{Endpoints: []Endpoint{NewEndpoint("http://h/v1", "m")}}
	c.Endpoints[0].SLO = SLO{TTFT: time.Second, ITL: time.Second}
	flag := SLO{E2E: 5 * time.Second}
	c.Apply(Overrides{SLO: &flag})
	if c.Endpoints[0].SLO != flag {
		t.Fatalf("--slo replaces the file's objectives whole: got %+v", c.Endpoints[0].SLO)
	}
	c.Endpoints[0].Price = &Price{Input: 1, GPUHour: 1}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("Validate = %v", err)
	}
}
