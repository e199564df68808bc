package config

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxShards bounds N in --shard I/N.
const MaxShards = 10000

// The environment variables --shard defaults from: a Kubernetes Indexed Job sets the first
// in every pod; the manifest sets the second to the Job's completions.
const (
	EnvShardIndex = "JOB_COMPLETION_INDEX"
	EnvShards     = "TOKSCOPE_SHARDS"
)

// Shard is one process's part of a run split over Of processes (docs/fleet.md, "Beyond one
// machine"): shard Index (0-based) of Of. The zero Shard is an unsharded run, whose shares
// are the whole.
type Shard struct {
	Index, Of int
}

// On reports whether the run is sharded at all.
func (s Shard) On() bool { return s.Of > 0 }

// String is "I/N", as --shard takes it; "" when not sharded.
func (s Shard) String() string {
	if !s.On() {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Of)
}

// Label is the shard's index as a Prometheus label value and an OTLP attribute ("" when
// not sharded): records, labels and attributes all name a shard by its index.
func (s Shard) Label() string {
	if !s.On() {
		return ""
	}
	return strconv.Itoa(s.Index)
}

// ParseShard reads "I/N" (0 ≤ I < N ≤ MaxShards).
func ParseShard(text string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(text), "/")
	if !ok {
		return Shard{}, fmt.Errorf("must be I/N, shard I (counted from 0) of N, e.g. 0/4")
	}
	of, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || of < 1 || of > MaxShards {
		return Shard{}, fmt.Errorf("N must be a whole number from 1 to %d", MaxShards)
	}
	index, err := strconv.Atoi(strings.TrimSpace(i))
	if err != nil || index < 0 || index >= of {
		return Shard{}, fmt.Errorf("I must be a whole number from 0 to %d (shards are counted from 0)", of-1)
	}
	return Shard{Index: index, Of: of}, nil
}

// Requests is the shard's share of n requests: n split as evenly as whole requests allow,
// the first n mod N shards taking one more (31 over 3: 11, 10, 10), so that the shares add
// up to n exactly. 0 (no limit) stays 0.
func (s Shard) Requests(n int) int {
	if !s.On() || n <= 0 {
		return n
	}
	share := n / s.Of
	if s.Index < n%s.Of {
		share++
	}
	return share
}

// Rate is the shard's share of an arrival rate: rate/N, so that N shards' Poisson arrivals
// (independent, each with a seed of its own) add up to one Poisson process of the whole rate.
func (s Shard) Rate(rate float64) float64 {
	if !s.On() {
		return rate
	}
	return rate / float64(s.Of)
}

// Seed is the shard's own seed, derived from the run's seed and its index: shards of one
// run draw different synthetic prompts, lengths and arrival gaps (with one seed they would
// send the same texts in lockstep), and the same (seed, shard) draws the same again. An
// unsharded run keeps seed.
func (s Shard) Seed(seed uint64) uint64 {
	if !s.On() {
		return seed
	}
	return splitmix64(seed ^ splitmix64(uint64(s.Index)+1))
}

// Takes reports whether the shard takes the i-th item (0-based) of a list every shard reads
// whole, such as a trace's lines: shard I takes the items with i mod N = I. An unsharded run
// takes every item.
func (s Shard) Takes(i int) bool {
	return !s.On() || i%s.Of == s.Index
}

// splitmix64 is Steele, Lea and Flood's mixing function: nearby inputs give unrelated outputs.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
