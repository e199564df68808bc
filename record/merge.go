package record

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/sample"
)

// Shard is what a line of a sharded run (--shard) says of it: "shard": I (from 0) and
// "shards": N. An unsharded run's lines have neither.
type Shard struct {
	Index *int `json:"shard,omitempty"`
	Of    int  `json:"shards,omitempty"`
}

func shardOf(s config.Shard) Shard {
	if !s.On() {
		return Shard{}
	}
	i := s.Index
	return Shard{Index: &i, Of: s.Of}
}

// expand turns --replay's arguments into the files they name, in order: a directory gives
// its *.jsonl files (sorted by name; not its subdirectories), a glob the files it matches
// (sorted), any other argument itself (opening it says whether it exists). A file named
// twice (a directory and a file in it) is read once.
func expand(args []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, arg := range args {
		paths, err := expandOne(arg)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			key := filepath.Clean(p)
			if abs, err := filepath.Abs(p); err == nil {
				key = abs
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no record file given")
	}
	return out, nil
}

func expandOne(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		files, err := regularFiles(filepath.Glob(filepath.Join(globEscape(arg), "*.jsonl")))
		if err == nil && len(files) == 0 {
			err = fmt.Errorf("%s: a directory without *.jsonl files", arg)
		}
		return files, err
	case err == nil || !strings.ContainsAny(arg, `*?[`):
		return []string{arg}, nil
	}
	files, err := regularFiles(filepath.Glob(arg))
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: matches no file", arg)
	}
	return files, err
}

// regularFiles keeps the paths that are not directories, sorted.
func regularFiles(paths []string, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := paths[:0]
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out, nil
}

// globEscape escapes a directory's name for filepath.Glob.
func globEscape(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if strings.ContainsRune(`*?[\`, r) && filepath.Separator != '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// source is one record file read back.
type source struct {
	path string
	file File
}

// merger builds one Replay from the records of several files (or of several shards in one
// file), as if one process had made every request.
type merger struct {
	rp     *Replay
	names  map[string][]int // endpoints by name
	events []event
	server []scrapeEvent
	shards map[int][]string // the files each shard's lines came from
	of     map[int]bool     // the shard counts the lines say
	// seqs are the request numbers each shard's endpoints used: one seen twice is a second
	// run appended to a shard's file (repeats counts them).
	seqs    map[seqKey]bool
	repeats int
}

type seqKey struct {
	shard    int
	endpoint string
	seq      uint64
}

type event struct {
	done  *sample.Done
	at    time.Time // when the request finished
	shard int       // -1: unsharded
}

// scrapeEvent is one recorded scrape, a server's or its GPUs', and the endpoint it joins.
type scrapeEvent struct {
	line  scrapeLine
	ep    int
	shard int
}

// merge turns the files' records into the events of one run: endpoints matched by name and
// model, in order of their first request (then those only scrapes name); the requests and
// the scrapes on the wall clock when the lines come from more than one file or shard, in
// file order otherwise (the order the live run saw them).
func merge(files []source) *Replay {
	m := &merger{rp: &Replay{Files: len(files)}, names: map[string][]int{},
		shards: map[int][]string{}, of: map[int]bool{}, seqs: map[seqKey]bool{}}
	for _, f := range files {
		for i := range f.file.Records {
			m.addRecord(&f.file.Records[i], f.path)
		}
	}
	for _, f := range files {
		for i := range f.file.Server {
			m.addScrape(&f.file.Server[i], f.path)
		}
		for i := range f.file.GPU {
			m.addScrape(&f.file.GPU[i], f.path)
		}
	}
	if len(files) > 1 || len(m.shards) > 1 {
		m.sortByWallClock()
	}
	for _, e := range m.events {
		m.rp.Events = append(m.rp.Events, e.done)
	}
	for _, s := range m.server {
		m.rp.Server = append(m.rp.Server, s.line.Update(s.ep))
	}
	m.nameApart()
	m.rp.Shards = len(m.shards)
	m.rp.shardNotes = m.shardNotes()
	return m.rp
}

// sortByWallClock puts the requests in the order they finished and the scrapes in the order
// they were taken, then numbers the endpoints in the order of their first request (then of
// their first scrape), so that nothing depends on how the lines were split into files.
func (m *merger) sortByWallClock() {
	slices.SortStableFunc(m.events, compareEvents)
	slices.SortStableFunc(m.server, func(a, b scrapeEvent) int {
		return cmp.Or(a.line.head().At.Compare(b.line.head().At), cmp.Compare(a.shard, b.shard),
			cmp.Compare(m.rp.Endpoints[a.ep].Name, m.rp.Endpoints[b.ep].Name))
	})
	renum := make([]int, len(m.rp.Endpoints))
	for i := range renum {
		renum[i] = -1
	}
	var eps []config.Endpoint
	see := func(ep int) int {
		if renum[ep] < 0 {
			renum[ep] = len(eps)
			eps = append(eps, m.rp.Endpoints[ep])
		}
		return renum[ep]
	}
	for _, e := range m.events {
		e.done.Endpoint = sample.EndpointIndex(see(int(e.done.Endpoint)))
	}
	for i := range m.server {
		m.server[i].ep = see(m.server[i].ep)
	}
	for ep := range m.rp.Endpoints { // interactive requests' endpoints: no event names them
		see(ep)
	}
	for name, same := range m.names {
		for i := range same {
			same[i] = renum[same[i]]
		}
		m.names[name] = same
	}
	m.rp.Endpoints = eps
}

// compareEvents orders requests by when they finished, ties broken by what tells any two
// records apart, so that the order does not depend on how the lines were split into files.
func compareEvents(a, b event) int {
	return cmp.Or(a.at.Compare(b.at), a.done.Sample.Start.Compare(b.done.Sample.Start), cmp.Compare(a.shard, b.shard),
		cmp.Compare(a.done.Sample.Endpoint, b.done.Sample.Endpoint), cmp.Compare(a.done.Sample.Seq, b.done.Sample.Seq))
}

func (m *merger) addRecord(rec *Record, path string) {
	s := rec.Sample()
	ep := m.endpoint(s.Endpoint, s.Model, false)
	if m.rp.Endpoints[ep].API == "" {
		m.rp.Endpoints[ep].API = s.API // a replayed endpoint speaks its records' API ("" before records had it: chat)
	}
	shard := m.noteShard(rec.Shard, path)
	if s.Stream != 0 {
		return // an interactive stream/race request: never in statistics, live or replayed
	}
	if k := (seqKey{shard, s.Endpoint, s.Seq}); shard >= 0 {
		if m.seqs[k] {
			m.repeats++
		}
		m.seqs[k] = true
	}
	rp := m.rp
	rp.Failed = rp.Failed || s.Failed()
	done := finishedAt(&s)
	if done.After(rp.End) {
		rp.End = done
	}
	m.events = append(m.events, event{done: &sample.Done{Endpoint: sample.EndpointIndex(ep), Sample: s}, at: done, shard: shard})
}

// addScrape adds a scrape line to the endpoint of its name; a GPU scrape marks the endpoint
// as having had a GPU exporter (RecordedGPU).
func (m *merger) addScrape(l scrapeLine, path string) {
	h := l.head()
	ep := m.endpoint(h.Endpoint, h.Model, true)
	if h.Type == gpuType {
		m.rp.Endpoints[ep].GPUMetrics = RecordedGPU
	}
	m.server = append(m.server, scrapeEvent{line: l, ep: ep, shard: m.noteShard(h.Shard, path)})
}

// endpoint is the index of the endpoint named name serving model, added when new: records
// of one name are one endpoint unless they name different models (an unknown model, "",
// matches any). A scrape (byName) takes an endpoint of its name whatever its model.
func (m *merger) endpoint(name, model string, byName bool) int {
	same := m.names[name]
	for _, loose := range []bool{false, true} {
		for _, i := range same {
			ep := m.rp.Endpoints[i]
			if ep.Model == model || loose && (byName || ep.Model == "" || model == "") {
				return i
			}
		}
	}
	i := len(m.rp.Endpoints)
	m.names[name] = append(same, i)
	m.rp.Endpoints = append(m.rp.Endpoints, config.Endpoint{Name: name, Model: model})
	return i
}

// nameApart names apart the endpoints that share a name but not a model: "name (model)".
func (m *merger) nameApart() {
	for name, same := range m.names {
		if len(same) < 2 {
			continue
		}
		for _, i := range same {
			ep := &m.rp.Endpoints[i]
			ep.Name = name + " (" + ep.Model + ")"
		}
	}
}

// noteShard notes the shard a line came from; -1 for an unsharded run's line.
func (m *merger) noteShard(s Shard, path string) int {
	if s.Index == nil {
		return -1
	}
	i := *s.Index
	if !slices.Contains(m.shards[i], path) {
		m.shards[i] = append(m.shards[i], path)
	}
	m.of[s.Of] = true
	return i
}

// shardNotes say what looks wrong with the shards merged: a shard missing, the same shard in
// two files (a run given twice?), runs split into different numbers of shards.
func (m *merger) shardNotes() []string {
	if len(m.shards) == 0 {
		return nil
	}
	var notes []string
	ofs := slices.Sorted(maps.Keys(m.of))
	if len(ofs) > 1 {
		notes = append(notes, fmt.Sprintf("the records are of runs split into different numbers of shards (%v)", ofs))
	}
	var missing []int
	for i := range ofs[len(ofs)-1] {
		if _, ok := m.shards[i]; !ok {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		notes = append(notes, fmt.Sprintf("no records of shard %s of %d: the figures are those of %d shard(s) only",
			joinInts(missing), ofs[len(ofs)-1], len(m.shards)))
	}
	if m.repeats > 0 {
		notes = append(notes, fmt.Sprintf("%d records repeat a request of their shard (endpoint and number): a second run appended to a shard's file? each counts", m.repeats))
	}
	for _, i := range slices.Sorted(maps.Keys(m.shards)) {
		if files := m.shards[i]; len(files) > 1 {
			notes = append(notes, fmt.Sprintf("shard %d's records are in %s (one run given twice?): each counts", i, strings.Join(files, " and ")))
		}
	}
	return notes
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
