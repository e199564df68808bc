package otlpexport_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"tokscope/cli"
	"tokscope/cli/clitest"
)

// TestShardPushesItsShard: a run given --shard 1/3 pushes its share of --requests with
// tokscope.shard="1" on the resource and on every data point (promexport's shard label), so
// that the shards of one Job stay apart in one collector.
func TestShardPushesItsShard(t *testing.T) {
	busy := clitest.BusySim(t)
	rcv := newReceiver(t)
	var stdout, stderr bytes.Buffer
	code := cli.Main("", []string{"--no-tui", "--requests", "7", "--shard", "1/3", "-i", "0s", "-o", "json",
		"--otlp", rcv.url, "-u", busy, "-m", "m"}, &stdout, &stderr)
	if code != cli.ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	var sum summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil || len(sum.Endpoints) != 1 || sum.Endpoints[0].Requests != 2 {
		t.Fatalf("want one endpoint with 2 requests (7 over 3 shards: 3, 2, 2) (%v): %s", err, stdout.String())
	}
	md, _ := rcv.last(t)
	metrics, _, resource := pushed(t, md)
	if resource["tokscope.shard"] != "1" {
		t.Errorf("resource %v: tokscope.shard is not 1", resource)
	}
	n := 0
	for name, points := range metrics {
		for _, p := range points {
			n++
			if p.attrs["tokscope.shard"] != "1" {
				t.Errorf("%s %v: no tokscope.shard=1", name, p.attrs)
			}
		}
	}
	e := sum.Endpoints[0]
	checkRequests(t, metrics, e.Name, map[string]string{"tokscope.endpoint": e.Name, "tokscope.shard": "1"},
		map[string]int{"ok": e.OK, "error": e.Errors}, e.ErrorKinds)
	if n < 10 {
		t.Errorf("%d data points pushed", n)
	}
}
