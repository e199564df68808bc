package ui

import (
	"slices"
	"testing"

	"tokscope/stats"
)

func TestChooseCardRows(t *testing.T) {
	essentials := []int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark}
	for _, tc := range []struct {
		name    string
		h       int
		facts   cardFacts
		want    []int // lines shown, in display order
		inTitle bool
		sparkH  int
	}{
		{"minimum card: the essentials", 5, cardFacts{}, essentials, false, 1},
		{"one spare row: totals", 6, cardFacts{},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals}, false, 1},
		{"errors come first once there are some", 6, cardFacts{errors: true, lastError: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineErrors}, false, 1},
		{"no last error: its row goes to the model", 8, cardFacts{},
			[]int{lineTitle, lineModel, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineErrors}, false, 1},
		{"last error shown when there is one", 9, cardFacts{errors: true, lastError: true},
			[]int{lineTitle, lineModel, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineErrors, lineLastError}, false, 1},
		{"open loop: the queue after the totals", 7, cardFacts{openLoop: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineQueue}, false, 1},
		{"TLS takes the first spare row", 6, cardFacts{tls: true},
			[]int{lineTitle, lineTLS, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark}, false, 1},
		{"TLS without a spare row joins the title", 5, cardFacts{tls: true}, essentials, true, 1},
		{"spare rows make the sparklines taller", 15, cardFacts{},
			[]int{lineTitle, lineModel, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineErrors}, false, 4},
		{"objectives: the SLO after the totals", 7, cardFacts{slo: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineSLO}, false, 1},
		{"a breach goes first, even before errors", 6, cardFacts{slo: true, breach: true, errors: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineSLO}, false, 1},
		{"the server after the SLO", 9, cardFacts{slo: true, server: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineSLO, lineServer, lineErrors}, false, 1},
		{"the server before errors without objectives", 8, cardFacts{server: true, errors: true},
			[]int{lineTitle, lineDecode, lineDecodeSpark, lineTTFT, lineTTFTSpark, lineTotals, lineServer, lineErrors}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := chooseCardRows(tc.h, tc.facts)
			var got []int
			for l := range nLines {
				if r.show[l] {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) || r.tlsInTitle != tc.inTitle || r.sparkH != tc.sparkH {
				t.Fatalf("chooseCardRows(%d) = lines %v, TLS in title %v, spark %d; want %v, %v, %d",
					tc.h, got, r.tlsInTitle, r.sparkH, tc.want, tc.inTitle, tc.sparkH)
			}
		})
	}
}

func TestSparkValues(t *testing.T) {
	hist := []stats.Point{
		{TTFT: 100, DecodeTPS: 50, DecodeOK: true},
		{TTFT: 200},
		{TTFT: 300, DecodeTPS: 70, DecodeOK: true},
	}
	for _, tc := range []struct {
		w            int
		decode, ttft []float64
	}{
		{10, []float64{50, 0, 70}, []float64{100, 200, 300}},
		{2, []float64{0, 70}, []float64{200, 300}}, // the newest w points
		{0, nil, nil},
	} {
		decode, ttft := sparkValues(hist, tc.w)
		if !slices.Equal(decode, tc.decode) || !slices.Equal(ttft, tc.ttft) {
			t.Errorf("sparkValues(w=%d) = %v, %v; want %v, %v", tc.w, decode, ttft, tc.decode, tc.ttft)
		}
	}
}
