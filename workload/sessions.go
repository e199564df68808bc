package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Agent sessions (--sessions): recorded agent traces replayed turn by turn, each turn's prompt
// built to the trace's length and block structure, the recorded tool and think times waited
// between turns, sub-agents run as contexts of their own. Three public formats are read
// (sessions_agentx.go, sessions_tracelab.go, sessions_aa.go); prompts are cut in
// sessions_build.go.

// Session formats, as --sessions-format names them.
const (
	FormatAgentX   = "agentx"   // Weka / AgentX kv-cache-tester traces: one JSON document a file
	FormatTraceLab = "tracelab" // TraceLab round traces: one JSONL line a round
	FormatAA       = "aa"       // Artificial Analysis agentperf-local replays: one JSONL line a turn
)

// SessionFormats lists the formats --sessions-format accepts.
var SessionFormats = []string{FormatAgentX, FormatTraceLab, FormatAA}

// Bounds of a session pool: every file is read whole before the run.
const (
	MaxSessionFileBytes = 64 << 20
	MaxSessions         = 10_000
	MaxSessionTurns     = 100_000 // turns of one session, sub-agents' included
	maxSubagentDepth    = 8
)

// Session is one recorded agent session: its root agent and, nested in it, its sub-agents.
type Session struct {
	Name      string // where it comes from: file, and its id within the file when there are several
	Format    string
	BlockSize int // tokens per hash id
	Root      *Agent
	// Turns counts every turn, sub-agents' included: what --requests counts.
	Turns int
	// ids is how many distinct block ids the session uses (sessions_build.go numbers them).
	ids int
}

// Agent is one context of a session: the root agent or a sub-agent, its turns and the
// sub-agents it starts, in the order the trace gives them.
type Agent struct {
	ID    string // the trace's agent_id; "" for the root
	Type  string // subagent_type
	Depth int    // 0 for the root
	Steps []Step
}

// Step is either one turn of the agent or one sub-agent it starts.
type Step struct {
	Turn *Turn
	Sub  *SubAgent
}

// SubAgent is a sub-agent started by its parent after the parent's previous turn.
type SubAgent struct {
	Agent *Agent
	// Start is the recorded time from the end of the parent's previous turn (its reply) to the
	// sub-agent's start.
	Start time.Duration
	// Background: the trace shows it still running when the parent's next turn began, so the
	// parent does not wait for it (it is joined when the session ends).
	Background bool
	// End is its recorded end from the same origin as Start (0 when unknown).
	End time.Duration
}

// Turn is one model call of a session.
type Turn struct {
	In, Out int // recorded prompt and output lengths (tokens); In is 0 when Messages say it (aa)
	// Blocks are the turn's full blocks of BlockSize tokens, as session-local ids (numbered
	// from 0 in order of first appearance); Tail is the id whose text the rest of the prompt
	// (In − len(Blocks)·BlockSize tokens) is cut from: the id that the context's next turn
	// has at this place, so a context that grows keeps its text.
	Blocks []int32
	Tail   int32
	// Gap is the recorded wait before this turn: from the end of the agent's previous turn
	// (or of the last sub-agent it joined) to this turn's start.
	Gap time.Duration
	// Tool says the turn's input is a tool's result: the gap before it is tool time, not
	// think time.
	Tool bool
	Stop string // the recorded stop reason ("tool_use", "end_turn", …); "" when not recorded
	// Messages are the turn's recorded messages (aa); nil for the formats that record lengths.
	Messages []Message
	Where    string // file:line or file: JSON path, for messages about the turn
}

// SessionPool is the sessions of a --sessions pool, in the order they are handed out.
type SessionPool struct {
	Spec     string
	Format   string // the format of the first file (each file is detected on its own)
	Sessions []*Session
	Turns    int
}

// LoadSessions reads a pool: a file, a glob or a directory (its regular files, in name
// order). format is "" to detect each file's format from its content. A file that cannot be
// read or that breaks its format is refused whole, as a *FileError with its line or its JSON
// path: nothing is sent before every file is read.
func LoadSessions(spec, format string) (*SessionPool, error) {
	if format != "" && !oneOf(format, SessionFormats) {
		return nil, fmt.Errorf("unknown sessions format %q: give %s", format, strings.Join(SessionFormats, ", "))
	}
	files, err := sessionFiles(spec)
	if err != nil {
		return nil, err
	}
	pool := &SessionPool{Spec: spec}
	for _, f := range files {
		ss, ff, err := loadSessionFile(f, format)
		if err != nil {
			return nil, err
		}
		if pool.Format == "" {
			pool.Format = ff
		}
		for _, s := range ss {
			if len(pool.Sessions) >= MaxSessions {
				return nil, &FileError{File: f, Msg: fmt.Sprintf("more than %d sessions in the pool", MaxSessions)}
			}
			pool.Sessions = append(pool.Sessions, s)
			pool.Turns += s.Turns
		}
	}
	if len(pool.Sessions) == 0 {
		return nil, &FileError{File: spec, Msg: "no session in it"}
	}
	return pool, nil
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}

// sessionFiles expands spec: a directory's regular files (dot files skipped), a glob's
// matches, or the file itself.
func sessionFiles(spec string) ([]string, error) {
	if st, err := os.Stat(spec); err == nil && st.IsDir() {
		ents, err := os.ReadDir(spec)
		if err != nil {
			return nil, &FileError{File: spec, Msg: err.Error()}
		}
		var out []string
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && !strings.EqualFold(e.Name(), "README.md") {
				out = append(out, filepath.Join(spec, e.Name()))
			}
		}
		if len(out) == 0 {
			return nil, &FileError{File: spec, Msg: "no file in the directory"}
		}
		return out, nil
	} else if err == nil {
		return []string{spec}, nil
	}
	matches, err := filepath.Glob(spec)
	if err != nil {
		return nil, &FileError{File: spec, Msg: "not a file, directory or glob: " + err.Error()}
	}
	if len(matches) == 0 {
		return nil, &FileError{File: spec, Msg: "no such file, directory or glob match"}
	}
	sort.Strings(matches)
	return matches, nil
}

// loadSessionFile reads one file whole (bounded) and hands it to its format's reader.
func loadSessionFile(path, format string) ([]*Session, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", &FileError{File: path, Msg: "cannot read the sessions: " + err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSessionFileBytes+1))
	if err != nil {
		return nil, "", &FileError{File: path, Msg: err.Error()}
	}
	if len(data) > MaxSessionFileBytes {
		return nil, "", &FileError{File: path, Msg: fmt.Sprintf("larger than %d MiB", MaxSessionFileBytes>>20)}
	}
	if format == "" {
		if format, err = detectSessionFormat(data); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, "", jsonFileError(path, data, err)
			}
			return nil, "", &FileError{File: path, Line: 1, Msg: err.Error()}
		}
	}
	var ss []*Session
	switch format {
	case FormatAgentX:
		var s *Session
		s, err = readAgentX(path, data)
		ss = []*Session{s}
	case FormatTraceLab:
		ss, err = readTraceLab(path, data)
	case FormatAA:
		ss, err = readAA(path, data)
	}
	if err != nil {
		return nil, "", err
	}
	for _, s := range ss {
		s.Format = format
		if s.Turns > MaxSessionTurns {
			return nil, "", &FileError{File: path, Msg: fmt.Sprintf("session %s has more than %d turns", s.Name, MaxSessionTurns)}
		}
		numberBlocks(s)
	}
	return ss, format, nil
}

// detectSessionFormat tells the format from the first JSON object's keys: AgentX's document
// has "requests" and "block_size"; a TraceLab line "round_index" and "newly_append_tokens";
// an AA line "messages" and "target_output_tokens". A Mooncake line is named as such.
func detectSessionFormat(data []byte) (string, error) {
	first := bytes.TrimSpace(data)
	if len(first) == 0 {
		return "", errors.New("empty file: no session in it")
	}
	if first[0] != '{' {
		return "", errors.New(`not a sessions file: neither one JSON document {"requests": […]} (AgentX) nor JSON Lines (TraceLab, AA)`)
	}
	var keys map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&keys); err != nil {
		return "", err // a syntax error, placed by the caller
	}
	has := func(ks ...string) bool {
		for _, k := range ks {
			if _, ok := keys[k]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case has("requests"):
		return FormatAgentX, nil
	case has("round_index") || has("newly_append_tokens"):
		return FormatTraceLab, nil
	case has("messages") && (has("target_output_tokens") || has("turn_id")):
		return FormatAA, nil
	case has("timestamp", "input_length"):
		return "", errors.New("a Mooncake trace (one request a line, no sessions): replay it with --trace")
	}
	return "", fmt.Errorf(`unknown sessions format (its first object has none of "requests", "round_index", "messages"): give --sessions-format %s`, strings.Join(SessionFormats, "|"))
}

// lines splits JSONL data into its non-blank lines with their numbers.
func jsonLines(data []byte) (out []numberedLine) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), MaxSessionFileBytes)
	n := 0
	for sc.Scan() {
		n++
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			out = append(out, numberedLine{n: n, b: append([]byte(nil), b...)})
		}
	}
	return out
}

type numberedLine struct {
	n int
	b []byte
}

// lineOf is the 1-based line and column of byte offset off in data.
func lineOf(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// numberBlocks renumbers a session's block ids (the trace's own, or made up by its reader)
// from 0 in order of first appearance, walking the whole tree in file order, so that the
// text of each id is chosen the same way on every run.
func numberBlocks(s *Session) {
	seen := map[int32]int32{}
	var walk func(a *Agent)
	id := func(v int32) int32 {
		n, ok := seen[v]
		if !ok {
			n = int32(len(seen))
			seen[v] = n
		}
		return n
	}
	walk = func(a *Agent) {
		for _, st := range a.Steps {
			if st.Sub != nil {
				walk(st.Sub.Agent)
				continue
			}
			for i, b := range st.Turn.Blocks {
				st.Turn.Blocks[i] = id(b)
			}
			st.Turn.Tail = id(st.Turn.Tail)
		}
	}
	walk(s.Root)
	s.ids = len(seen)
}

// countTurns is the number of turns of a, its sub-agents' included.
func countTurns(a *Agent) int {
	n := 0
	for _, st := range a.Steps {
		if st.Sub != nil {
			n += countTurns(st.Sub.Agent)
		} else {
			n++
		}
	}
	return n
}

// setTails gives each turn of a context the id its text tail is cut from: the id that the
// context's next turn has right after this turn's blocks when it continues them, else a new
// id of its own (fresh returns one).
func setTails(turns []*Turn, fresh func() int32) {
	for i, t := range turns {
		t.Tail = -1
		if i+1 < len(turns) {
			next := turns[i+1].Blocks
			if len(next) > len(t.Blocks) && prefixOf(t.Blocks, next) {
				t.Tail = next[len(t.Blocks)]
			}
		}
		if t.Tail < 0 {
			t.Tail = fresh()
		}
	}
}

func prefixOf(a, b []int32) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
