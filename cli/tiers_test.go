package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tokscope/sim"
)

// Bad tiers and their flags are refused before anything is sent, exit 2, each with a line
// that says what is wrong.
func TestTierFlags(t *testing.T) {
	base := []string{"--no-tui", "-u", "http://127.0.0.1:1/v1", "-m", "m"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--tier", "fast=otps.p25>=100"}, "--tier needs --find-max"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast"}, `invalid value "fast" for --tier: give NAME=OBJECTIVES`},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps>=100"}, "is not METRIC.pQ>=BOUND"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps.p25>100"}, "the bound is >= (at least) or <= (at most), not >"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps.q25>=100"}, "is not a percentile"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otpz.p25>=100"}, `unknown metric "otpz" in "otpz.p25>=100"; did you mean "otps"?`},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=ttft.p90<=15"}, "ttft_ms is a time: give a duration such as 500ms or 15s"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "a=ttft.p90<=1s", "--tier", "a=otps.p25>=1"}, "tier a is given twice"},
		{[]string{"--find-max", "users", "--turns", "2"}, "--find-max users needs tiers"},
		{[]string{"--find-max", "users", "--tier", "fast=otps.p25>=100"}, "--find-max users needs users: agent sessions (--sessions FILE"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps.p25>=100", "--tier-require", "fsat>=4"}, `no tier "fsat"; did you mean "fast"?`},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps.p25>=100", "--tier-require", "fast=4"}, "give NAME>=U"},
		{[]string{"--find-max", "users", "--turns", "2", "--tier", "fast=otps.p25>=100", "--accelerators", "0"}, "invalid value 0 for --accelerators"},
	} {
		args := append(append([]string(nil), base...), c.args...)
		var stderr bytes.Buffer
		if code := run("", args, io.Discard, &stderr, process{}); code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr.String(), ExitUsage, c.want)
		}
	}
}

// A config's tiers: with an unknown metric is refused at the objective's file:line:col.
func TestTierConfigError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tiers.yaml")
	src := "endpoints:\n  - base_url: http://127.0.0.1:1/v1\n    model: m\n    turns: 2\ntiers:\n  fast: \"otps.p25>=100, ttf.p90<=15s\"\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	code := run("", []string{"--no-tui", "-c", path, "--find-max", "users"}, io.Discard, &stderr, process{})
	want := path + `:6:25: tier fast: unknown metric "ttf" in "ttf.p90<=15s"; did you mean "ttft"?`
	if code != ExitUsage || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d, %q; want %d and %q", code, stderr.String(), ExitUsage, want)
	}
}

// Through the command line against a server of 2 slots whose per-stream speed falls with the
// requests it runs (200/n tok/s): two tiers in one search, conversations as users. The fast
// tier (P25 ≥ 150 tok/s) holds at 1 user only (100 tok/s at 2); the slow one (TTFT P90 ≤
// 150 ms) up to the 2 slots: at 3, a turn waits for a slot, on average half of a 40-token
// answer (≈ 200 ms at 100 tok/s), against a TTFT of 30 ms. --tier-require slow>=3 exits 3 and names the tier; the JSON carries both boundaries,
// the CSV a row per tier.
func TestFindMaxUsersTiers(t *testing.T) {
	p := sim.Profile{Name: "p", Model: "m", TTFT: 30 * time.Millisecond, TokensPerSecond: 200, BatchSlowdown: 1, MaxTokens: 40, MaxRunning: 2,
		GPU: sim.GPU{Count: 2, IdleWatts: 100, SlotWatts: 50}}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	args := []string{"--no-tui", "--find-max", "users", "--turns", "2", "--tier", "fast=otps.p25>=150", "--tier", "slow=ttft.p90<=150ms",
		"--step-duration", "300ms", "--find-max-limit", "8", "--max-tokens", "40", "--accelerators", "2", "-u", srv.BaseURL("p"), "-m", "m"}
	var stdout, stderr bytes.Buffer
	code := run("", append(append([]string(nil), args...), "-o", "json", "--tier-require", "slow>=3", "--gpu-metrics", srv.GPUMetricsURL("p")), &stdout, &stderr, process{})
	t.Logf("%s", stderr.String())
	if code != ExitSLO || !strings.Contains(stderr.String(), "tier requirement not met: slow on m: boundary 2 < 3") {
		t.Errorf("exit %d, want %d naming slow", code, ExitSLO)
	}
	var doc struct {
		Endpoints []struct {
			Capacity struct {
				By    string
				Tiers []struct {
					Name        string
					Boundary    *float64
					FirstMiss   *float64 `json:"first_miss"`
					BoundBy     *string  `json:"bound_by"`
					OutputTPS   *float64 `json:"output_tps"`
					Sessions    *float64 `json:"sessions_per_min"`
					UsersPerGPU *float64 `json:"users_per_gpu"`
					UsersPerKW  *float64 `json:"users_per_kw"`
					PerJoule    *float64 `json:"tokens_per_joule"`
				}
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Endpoints) != 1 {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	c := doc.Endpoints[0].Capacity
	if c.By != "users" || len(c.Tiers) != 2 {
		t.Fatalf("%s", stdout.String())
	}
	fast, slow := c.Tiers[0], c.Tiers[1]
	if fast.Boundary == nil || *fast.Boundary != 1 || slow.Boundary == nil || *slow.Boundary != 2 || slow.FirstMiss == nil || *slow.FirstMiss != 3 {
		t.Errorf("boundaries: %s", stdout.String())
	}
	if slow.BoundBy == nil || *slow.BoundBy != "ttft.p90<=150ms" || slow.OutputTPS == nil || slow.Sessions == nil || *slow.Sessions <= 0 {
		t.Errorf("slow's figures: %s", stdout.String())
	}
	if slow.UsersPerGPU == nil || *slow.UsersPerGPU != 1 {
		t.Errorf("per GPU (2 accelerators): %s", stdout.String())
	}
	// The GPUs draw 100 W idle and 50 W per running request: 200 W with the 2 slots busy, less
	// when a scrape's span reaches back into the drain before the step. So 2 users per 0.1 to
	// 0.2 kW, and the boundary's tok/s over those watts.
	if kw := slow.UsersPerKW; kw == nil || *kw < 9.5 || *kw > 20.5 || slow.PerJoule == nil ||
		math.Abs(*slow.PerJoule-*slow.OutputTPS*(*kw)/2/1000) > 0.01**slow.PerJoule {
		t.Errorf("per kW and tokens per joule at the boundary: %s", stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := run("", append(args, "-o", "csv"), &stdout, &stderr, process{}); code != ExitOK {
		t.Errorf("csv: exit %d\n%s", code, stderr.String())
	}
	rows, err := csv.NewReader(&stdout).ReadAll()
	if err != nil || len(rows) != 3 || rows[0][3] != "tier" || rows[1][3] != "fast" || rows[2][5] != "2" {
		t.Errorf("csv %v: %q", err, rows)
	}
}

// Agent sessions are users too: with --sessions, --find-max users varies the sessions in
// flight (one a lane), and a step counts the sessions whose every turn ended ok in it. Against
// the same 2-slot server as above, sessions of four short rounds with no tool time: TTFT P90
// ≤ 150 ms holds while each session has a slot (2 users) and misses at 3, when a turn waits for
// a slot. The plan says sessions, and the boundary's sessions per minute is a count of whole
// sessions, above 0.
func TestFindMaxUsersSessions(t *testing.T) {
	p := sim.Profile{Name: "p", Model: "m", TTFT: 30 * time.Millisecond, TokensPerSecond: 200, BatchSlowdown: 1, MaxRunning: 2}
	srv, err := sim.Start(sim.Options{}, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	var lines strings.Builder
	for s := 0; s < 6; s++ {
		for r := 0; r < 4; r++ {
			fmt.Fprintf(&lines, `{"session_id": "s%d", "round_index": %d, "input_tokens_total": %d, "prefix_tokens": %d, "newly_append_tokens": 64, "output_tokens": 40}`+"\n",
				s, r, 128+64*r, 64+64*r)
		}
	}
	path := filepath.Join(t.TempDir(), "rounds.jsonl")
	if err := os.WriteFile(path, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--no-tui", "-o", "json", "--find-max", "users", "--sessions", path, "--tool-time", "none", "--tier", "slow=ttft.p90<=150ms",
		"--step-duration", "300ms", "--find-max-limit", "8", "-u", srv.BaseURL("p"), "-m", "m"}
	var stdout, stderr bytes.Buffer
	if code := run("", args, &stdout, &stderr, process{}); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var doc struct {
		Endpoints []struct {
			Capacity struct {
				By    string
				Tiers []struct {
					Boundary  *float64
					FirstMiss *float64 `json:"first_miss"`
					Sessions  *float64 `json:"sessions_per_min"`
				}
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || len(doc.Endpoints) != 1 || len(doc.Endpoints[0].Capacity.Tiers) != 1 {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	c := doc.Endpoints[0].Capacity
	slow := c.Tiers[0]
	if c.By != "users" || slow.Boundary == nil || *slow.Boundary != 2 || slow.FirstMiss == nil || *slow.FirstMiss != 3 {
		t.Errorf("boundary: %s\n%s", stdout.String(), stderr.String())
	}
	if slow.Sessions == nil || *slow.Sessions <= 0 {
		t.Errorf("sessions per minute at the boundary: %s", stdout.String())
	}
	// Without sessions or conversations there are no users to count.
	stdout.Reset()
	stderr.Reset()
	if code := run("", []string{"--no-tui", "--find-max", "users", "--tier", "slow=ttft.p90<=150ms", "-u", srv.BaseURL("p"), "-m", "m"}, &stdout, &stderr, process{}); code != ExitUsage ||
		!strings.Contains(stderr.String(), "--sessions FILE") {
		t.Errorf("exit %d: %s", code, stderr.String())
	}
}
