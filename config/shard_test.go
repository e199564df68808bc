package config

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	for text, want := range map[string]Shard{"0/1": {0, 1}, "2/3": {2, 3}, " 1 / 4 ": {1, 4}, "9999/10000": {9999, 10000}} {
		got, err := ParseShard(text)
		if err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", text, got, err, want)
		}
		if got.String() != strings.ReplaceAll(strings.TrimSpace(text), " ", "") {
			t.Errorf("%v prints as %q", got, got.String())
		}
	}
	for text, says := range map[string]string{
		"3":       "must be I/N",
		"3/3":     "from 0 to 2",
		"-1/3":    "from 0 to 2",
		"a/3":     "from 0 to 2",
		"0/0":     "from 1 to",
		"0/10001": "from 1 to",
		"1/x":     "from 1 to",
		"":        "must be I/N",
	} {
		if _, err := ParseShard(text); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseShard(%q): error %v, want one saying %q", text, err, says)
		}
	}
}

// The shares of --requests add up to the whole exactly, and differ by at most one.
func TestShardRequestsAddUp(t *testing.T) {
	for _, c := range []struct {
		n, of int
		want  []int
	}{{30, 3, []int{10, 10, 10}}, {31, 3, []int{11, 10, 10}}, {32, 3, []int{11, 11, 10}}, {2, 3, []int{1, 1, 0}}, {0, 3, []int{0, 0, 0}}} {
		for i, want := range c.want {
			if got := (Shard{i, c.of}).Requests(c.n); got != want {
				t.Errorf("%d over %d: shard %d has %d, want %d", c.n, c.of, i, got, want)
			}
		}
	}
	for n := 0; n < 200; n++ {
		for of := 1; of <= 9; of++ {
			sum := 0
			for i := range of {
				sum += Shard{i, of}.Requests(n)
			}
			if sum != n {
				t.Fatalf("%d over %d shards: shares add up to %d", n, of, sum)
			}
		}
	}
	if got := (Shard{}).Requests(7); got != 7 {
		t.Errorf("unsharded: %d requests, want 7", got)
	}
}

func TestShardRateSeedTakes(t *testing.T) {
	s := Shard{1, 4}
	if got := s.Rate(10); got != 2.5 {
		t.Errorf("rate share %v, want 2.5", got)
	}
	if got := (Shard{}).Rate(10); got != 10 {
		t.Errorf("unsharded rate %v", got)
	}
	if (Shard{}).Seed(42) != 42 {
		t.Error("an unsharded run changed its seed")
	}
	seen := map[uint64]int{}
	for i := range 64 {
		seed := Shard{i, 64}.Seed(42)
		if j, dup := seen[seed]; dup {
			t.Fatalf("shards %d and %d share seed %d", j, i, seed)
		}
		seen[seed] = i
		if seed != (Shard{i, 64}).Seed(42) {
			t.Fatal("a shard's seed is not reproducible")
		}
	}
	if (Shard{0, 2}).Seed(1) == (Shard{0, 2}).Seed(2) {
		t.Error("the run's seed does not reach the shard's")
	}
	var took []int
	for i := range 10 {
		if (Shard{2, 3}).Takes(i) {
			took = append(took, i)
		}
	}
	if len(took) != 3 || took[0] != 2 || took[1] != 5 || took[2] != 8 {
		t.Errorf("shard 2/3 takes items %v, want 2 5 8", took)
	}
	if !(Shard{}).Takes(5) {
		t.Error("an unsharded run skips an item")
	}
}
