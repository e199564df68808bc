package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"tokscope/cli/clitest"
	"tokscope/config"
	"tokscope/workload"
)

func TestShardFlagErrors(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	os.WriteFile(rec, []byte(`{"endpoint":"a"}`+"\n"), 0o600)
	for _, c := range []struct {
		args    []string
		accepts string
	}{
		{[]string{"--demo", "--shard", "3/3"}, "from 0 to 2"},
		{[]string{"--demo", "--shard", "2"}, "must be I/N"},
		{[]string{"--demo", "--shard", "0/0"}, "from 1 to"},
		{[]string{"--demo", "--shard="}, "must be I/N"},
		{[]string{"--demo", "--no-tui", "--requests", "2", "--shard", "2/3"}, "at least 3"},
		// One rule for every index: shard 0 would have had a request, and refuses all the same.
		{[]string{"--demo", "--no-tui", "--requests", "2", "--shard", "0/3"}, "at least 3"},
		{[]string{"--demo", "--no-tui", "--requests", "1", "--shard", "0/2"}, "at least 2"},
		{[]string{"--demo", "--no-tui", "--requests", "1", "--shard", "1/2"}, "at least 2"},
		{[]string{"--demo", "--shard", "0/2", "--sweep", "1,2"}, "exclude each other"},
		{[]string{"--demo", "--shard", "0/2", "--find-max", "concurrency", "--slo", "ttft=1s"}, "exclude each other"},
		{[]string{"--replay", rec, "--shard", "0/2"}, "exclude each other"},
		{[]string{"--calibrate", "--shard", "0/2"}, "exclude each other"},
	} {
		oneLineNaming(t, c.args, "--shard", c.accepts)
	}
}

// An Indexed Job's pods give no --shard: the variables say it, and bad ones are exit 2 naming
// them. JOB_COMPLETION_INDEX alone (any Indexed Job) shards nothing; a replay in the same
// environment (the merge step) is not refused.
func TestShardFromTheEnvironment(t *testing.T) {
	t.Setenv(config.EnvShards, "3")
	t.Setenv(config.EnvShardIndex, "2")
	o, err := parseFlags([]string{"--demo", "--no-tui", "--requests", "31", "--rate", "6", "--seed", "5"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if o.shard != (config.Shard{Index: 2, Of: 3}) || o.requests != 10 || o.rate != 2 || o.seed == 5 {
		t.Errorf("shard %v: requests %d rate %v seed %d; want shard 2/3, 10 requests, rate 2, a seed of its own", o.shard, o.requests, o.rate, o.seed)
	}
	o, err = parseFlags([]string{"--demo", "--no-tui", "--requests", "31", "--shard", "0/3"}, os.Stderr)
	if err != nil || o.shard.Index != 0 || o.requests != 11 {
		t.Errorf("--shard 0/3 over the environment: %v, %d requests (%v)", o.shard, o.requests, err)
	}
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	if o, err := parseFlags([]string{"--replay", rec, "--no-tui"}, os.Stderr); err != nil || o.shard.On() {
		t.Errorf("a replay under the Job's variables: %v, shard %v", err, o.shard)
	}

	t.Setenv(config.EnvShardIndex, "3")
	oneLineNaming(t, []string{"--demo"}, "$"+config.EnvShardIndex, "from 0 to 2")
	t.Setenv(config.EnvShards, "many")
	oneLineNaming(t, []string{"--demo"}, "$"+config.EnvShards, "must be")
	os.Unsetenv(config.EnvShardIndex)
	t.Setenv(config.EnvShards, "3")
	oneLineNaming(t, []string{"--demo"}, "$"+config.EnvShardIndex, "--shard I/3")
	os.Unsetenv(config.EnvShards)
	t.Setenv(config.EnvShardIndex, "1")
	if o, err := parseFlags([]string{"--demo"}, os.Stderr); err != nil || o.shard.On() {
		t.Errorf("JOB_COMPLETION_INDEX alone: %v, shard %v", err, o.shard)
	}
}

// Each shard's synthetic prompts are its own: the same --seed gives every shard another
// seed, hence other texts and lengths, and the same shard the same again.
func TestShardsDrawTheirOwnPrompts(t *testing.T) {
	prompts := func(shard string) []string {
		o, err := parseFlags([]string{"--demo", "--seed", "7", "--input-tokens", "40:10", "--cache", "reuse", "--shard", shard}, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		ep := config.NewEndpoint("http://127.0.0.1:1/v1", "m")
		ep.InputTokens, ep.Cache = o.inputTokens, o.cache
		works, err := workload.ForEndpoints([]config.Endpoint{ep}, o.seed)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for range 5 {
			req := works[0].Next()
			out = append(out, fmt.Sprint(req.Messages))
		}
		return out
	}
	a, b := prompts("0/2"), prompts("1/2")
	if strings.Join(a, "|") == strings.Join(b, "|") {
		t.Errorf("shards 0/2 and 1/2 send the same prompts: %q", a)
	}
	if again := prompts("0/2"); strings.Join(a, "|") != strings.Join(again, "|") {
		t.Error("the same shard and seed drew other prompts")
	}
}

// TestShardsMergeToTheUnion: a run split in 3 shards (run at once against one simulator),
// merged by --replay of their records' directory, has the figures of the union of its
// requests: the JSON summary of one file holding all three files' lines is the same, apart
// from "shards"; the counts are the shards' sums; every record says its shard.
func TestShardsMergeToTheUnion(t *testing.T) {
	url := clitest.BusySim(t)
	dir := t.TempDir()
	shardDocs := make([]string, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			var out, errOut bytes.Buffer
			code := Main("", []string{"--no-tui", "-o", "json", "--requests", "31", "--shard", fmt.Sprintf("%d/3", i),
				"-n", "2", "-i", "0s", "-u", url, "-m", "m", "--record", filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))}, &out, &errOut)
			if code != ExitOK {
				t.Errorf("shard %d: exit %d: %s", i, code, errOut.String())
			}
			shardDocs[i] = out.String()
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	var union, plain bytes.Buffer // every line; every line without its shard
	shardKeys := regexp.MustCompile(`,"shard":\d+,"shards":3`)
	for i := range 3 {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))
		for _, r := range clitest.WholeRecords(t, path) {
			if r.Index == nil || *r.Index != i || r.Of != 3 {
				t.Fatalf("%s: a record of shard %v of %d", path, r.Index, r.Of)
			}
		}
		b, _ := os.ReadFile(path)
		union.Write(b)
		plain.Write(shardKeys.ReplaceAll(b, nil))
	}
	if bytes.Contains(plain.Bytes(), []byte(`"shard"`)) {
		t.Fatal("the shard keys were not all taken out")
	}
	other := t.TempDir()
	unionPath, plainPath := filepath.Join(other, "union.jsonl"), filepath.Join(other, "plain.jsonl")
	os.WriteFile(unionPath, union.Bytes(), 0o600)
	os.WriteFile(plainPath, plain.Bytes(), 0o600)

	merged := replayJSON(t, dir+"/")
	if got := replayJSON(t, unionPath); got != merged {
		t.Errorf("the union's lines in one file:\n%s\nthe merged directory:\n%s", got, merged)
	}
	withoutShards := strings.Replace(merged, `,"shards":3`, "", 1)
	if withoutShards == merged {
		t.Errorf(`the merged summary does not say "shards": 3: %s`, merged)
	}
	if got := replayJSON(t, plainPath); got != withoutShards {
		t.Errorf("one file of the union's requests, no shard said:\n%s\nmerged, apart from shards:\n%s", got, withoutShards)
	}
	// The same merge from a glob and from files after the flags.
	if got := replayJSON(t, filepath.Join(dir, "shard-*.jsonl")); got != merged {
		t.Errorf("merged from a glob: %s", got)
	}
	if got := replayJSON(t, filepath.Join(dir, "shard-0.jsonl"), filepath.Join(dir, "shard-2.jsonl"), filepath.Join(dir, "shard-1.jsonl")); got != merged {
		t.Errorf("merged from files in another order: %s", got)
	}
	alone := make([]string, 3)
	for i := range alone {
		var out, errOut bytes.Buffer
		if code := Main("", []string{"replay", filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)), "--no-tui", "-o", "json"}, &out, &errOut); code != ExitOK ||
			!strings.Contains(errOut.String(), "the figures are those of 1 shard(s) only") {
			t.Errorf("shard %d replayed alone: exit %d, stderr %q: want a warning that the other shards are missing", i, code, errOut.String())
		}
		alone[i] = out.String()
	}
	checkSums(t, shardDocs, alone, merged)
}

// replayJSON is the JSON summary of --replay over args (the first after the flag, the others
// after the flags).
func replayJSON(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main("", append([]string{"replay", "--no-tui", "-o", "json"}, args...), &out, &errOut); code != ExitOK {
		t.Fatalf("--replay %v: exit %d: %s", args, code, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Errorf("--replay %v: stderr %s", args, errOut.String())
	}
	return out.String()
}

// checkSums: the merged counts are the sums of the shards' own summaries (11 + 10 + 10
// requests of 31), and its distributions span those of each shard's record replayed alone.
func checkSums(t *testing.T, shardDocs, alone []string, merged string) {
	t.Helper()
	type endpoint struct {
		Requests, OK int
		OutputTokens int64                      `json:"output_tokens"`
		TTFT         struct{ Min, Max float64 } `json:"ttft_ms"`
	}
	type doc struct {
		Endpoints []endpoint
		Shards    int
	}
	var m doc
	if err := json.Unmarshal([]byte(merged), &m); err != nil || len(m.Endpoints) != 1 || m.Shards != 3 {
		t.Fatalf("merged summary (%v): %s", err, merged)
	}
	var sum endpoint
	sum.TTFT.Min = 1e9
	for i, s := range shardDocs {
		var d, r doc
		if err := json.Unmarshal([]byte(s), &d); err != nil || len(d.Endpoints) != 1 || d.Shards != 0 {
			t.Fatalf("shard %d's summary (%v): %s", i, err, s)
		}
		if err := json.Unmarshal([]byte(alone[i]), &r); err != nil || len(r.Endpoints) != 1 || r.Shards != 0 {
			t.Fatalf("shard %d's record replayed alone (%v): %s", i, err, alone[i])
		}
		e := d.Endpoints[0]
		e.TTFT = r.Endpoints[0].TTFT
		if want := []int{11, 10, 10}[i]; e.Requests != want {
			t.Errorf("shard %d ran %d requests, want %d (31 over 3)", i, e.Requests, want)
		}
		sum.Requests, sum.OK, sum.OutputTokens = sum.Requests+e.Requests, sum.OK+e.OK, sum.OutputTokens+e.OutputTokens
		sum.TTFT.Min, sum.TTFT.Max = min(sum.TTFT.Min, e.TTFT.Min), max(sum.TTFT.Max, e.TTFT.Max)
	}
	if got := m.Endpoints[0]; got != sum || sum.Requests != 31 {
		t.Errorf("merged %+v, the shards' sums %+v (31 requests)", got, sum)
	}
}

// A trace with fewer lines than shards is refused by every shard, not only by those whose
// share would be empty; with as many lines as shards, each index gets one.
func TestShardTraceOneRule(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(path, []byte("{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 3}\n"), 0o600)
	for _, shard := range []string{"0/2", "1/2"} {
		var stdout, stderr bytes.Buffer
		code := Main("", []string{"--no-tui", "-u", "http://127.0.0.1:9/v1", "-m", "m", "--trace", path, "--shard", shard}, &stdout, &stderr)
		if code != ExitUsage || !strings.Contains(stderr.String(), "fewer than the 2 shards") {
			t.Errorf("--shard %s: exit %d, stderr %q", shard, code, stderr.String())
		}
	}
}
