package export

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"tokscope/feature"

	"tokscope/stats"
)

// How the run ended (docs/cli.md, "End of a run"): the grace given to the requests in flight,
// how long the run waited for them, and how many it cut. A replay knows the cut requests
// (the record says "cut": true) but not the grace, and says nothing here.

// jsonGrace is the top-level "grace" of the JSON summary.
type jsonGrace struct {
	LimitS  feature.Number `json:"limit_s"`  // --grace
	WaitedS feature.Number `json:"waited_s"` // how long the run waited for the requests in flight
	Cut     int            `json:"cut"`      // requests cut when it ran out, over every endpoint
}

func graceJSON(snap *stats.Snapshot) *jsonGrace {
	if !snap.End.Finished {
		return nil
	}
	return &jsonGrace{LimitS: feature.Number(snap.End.Grace.Seconds()), WaitedS: feature.Number(snap.End.Waited.Seconds()), Cut: totalCut(snap)}
}

func totalCut(snap *stats.Snapshot) int {
	n := 0
	for i := range snap.Endpoints {
		n += snap.Endpoints[i].Cut
	}
	return n
}

// GraceLine says how the end of the run went, for the table: "" when nothing was in flight
// (or in a replay).
func GraceLine(snap *stats.Snapshot) string {
	end := snap.End
	cut := totalCut(snap)
	switch {
	case !end.Finished || (cut == 0 && end.Waited < 5*time.Millisecond): // under 5 ms: nothing was in flight
		return ""
	case cut == 0:
		return fmt.Sprintf("end of the run: the requests in flight finished within %s of the %s grace",
			seconds(end.Waited), seconds(end.Grace))
	case end.Grace == 0:
		return fmt.Sprintf("end of the run: %d requests in flight were cut at once (counted as cut, not errors)", cut)
	}
	return fmt.Sprintf("end of the run: waited %s (the whole grace) for the requests in flight; %d were cut (counted as cut, not errors)",
		seconds(end.Waited), cut)
}

// seconds is a duration as "2.1 s", "30 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64) + " s"
}
