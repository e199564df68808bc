package cli

import (
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"tokscope/config"
)

// shardFlags are --shard I/N (docs/fleet.md, "Beyond one machine"): this process runs shard I of
// a run split over N. Without the flag it comes from $JOB_COMPLETION_INDEX (set by a
// Kubernetes Indexed Job in every pod) and $TOKSCOPE_SHARDS (N, set by the manifest), so
// that the pods of one Job need no arguments of their own.
type shardFlags struct {
	shardText string
	shard     config.Shard // parsed by checkShard; the zero Shard when not sharded
	// shardFrom says where the shard came from, for messages: "--shard" or the variables.
	shardFrom string
}

func addShardFlags(fs *pflag.FlagSet, o *options) {
	fs.StringVar(&o.shardText, "shard", "", "run shard `I/N` (I from 0) of a run split over N processes: its share of --requests and --rate, a seed of its own, "+
		"\"shard\" in records and metrics (default from $"+config.EnvShardIndex+" and $"+config.EnvShards+": a Kubernetes Indexed Job)")
}

// checkShard parses --shard, or its default from the environment, and gives the shard its
// share: --requests and --rate become the shard's, --seed its own. It runs after the load
// flags are parsed. The environment applies only to runs that measure with a load to share
// (not replay, calibrate, models or sim, nor their old spellings), so that a merge step in the same Job is not
// refused for the variables it inherits.
func (o *options) checkShard() error {
	text, from, err := o.shardSource()
	if err != nil || from == "" {
		return err
	}
	s, err := config.ParseShard(text)
	if err != nil {
		return usagef("invalid value %q for %s: %v", text, from, err)
	}
	o.shard, o.shardFrom = s, from
	for _, name := range []string{"sweep", "find-max"} {
		if o.set(name) {
			return usagef("%s and --%s exclude each other: each shard would search the whole load on its own", from, name)
		}
	}
	// One rule for every index: each shard must have a request, so --requests below N is
	// refused by every shard alike, not only by those whose share would be empty (with
	// --requests 1 over 2 shards, shard 0 would run one and shard 1 none).
	if o.requests > 0 && o.requests < s.Of {
		return usagef("--requests %d is fewer than the %d shards (%s %s): some shards would have none; give --requests at least %d",
			o.requests, s.Of, from, s, s.Of)
	}
	o.requests = s.Requests(o.requests)
	o.rate = s.Rate(o.rate)
	o.seed = s.Seed(o.seed)
	return nil
}

// shardSource is the shard's text and where it came from: --shard, else the environment
// of an Indexed Job ("" when neither says anything).
func (o *options) shardSource() (text, from string, err error) {
	if o.set("shard") {
		for _, name := range []string{"replay", "calibrate", "list-models"} {
			if o.set(name) {
				return "", "", usagef("--shard and --%s exclude each other: only a run that sends requests has a share of them", name)
			}
		}
		return o.shardText, "--shard", nil
	}
	if o.replay != "" || o.calibrate || o.listModels || (o.command != nil && o.command.name != "") {
		return "", "", nil // a command (sim, help, ...) sends no load to share
	}
	n, nSet := os.LookupEnv(config.EnvShards)
	if !nSet {
		// Kubernetes sets JOB_COMPLETION_INDEX in every Indexed Job, sharded or not: alone it
		// says nothing about how many shards there are.
		return "", "", nil
	}
	i, iSet := os.LookupEnv(config.EnvShardIndex)
	if !iSet {
		return "", "", usagef("$%s=%s but $%s is not set: give --shard I/%s (I from 0), or run in a Kubernetes Indexed Job",
			config.EnvShards, n, config.EnvShardIndex, strings.TrimSpace(n))
	}
	if _, err := strconv.Atoi(strings.TrimSpace(n)); err != nil {
		return "", "", usagef("invalid value %q for $%s: must be the number of shards, a whole number from 1 to %d", n, config.EnvShards, config.MaxShards)
	}
	return strings.TrimSpace(i) + "/" + strings.TrimSpace(n), "$" + config.EnvShardIndex + "/$" + config.EnvShards, nil
}
