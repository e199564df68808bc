package feature

import "testing"

func TestDollars(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.0027324: "0.0027324", 1.2e-7: "0.00000012", 123456.789: "123457", 0.1234567: "0.123457"} {
		if got := formatDollars(v); got != want {
			t.Errorf("formatDollars(%v) = %q, want %q", v, got, want)
		}
	}
}
