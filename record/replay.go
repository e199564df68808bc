package record

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"tokscope/config"
	"tokscope/sample"
	"tokscope/servermetrics"
)

// Replay is one or more --record files read back (--replay): the events of a finished run,
// which the statistics and the UI take in exactly as they took the live run's. Several files
// (or the lines of several shards) merge into the events of one run, as if one process had
// made every request (merge.go).
type Replay struct {
	Endpoints []config.Endpoint // named as recorded, in order of first appearance
	Events    []sample.Event    // a *sample.Done per record; interactive stream records left out
	// Server is the server scrapes the run recorded (nil in a record written before they
	// were): feed them to stats.(*Aggregator).ObserveServer. Each shard's scrapes are kept.
	Server  []servermetrics.Update
	End     time.Time // when the last recorded request finished
	Failed  bool      // a counted request (not a warm-up, not interactive) did not succeed
	Warning string    // why some records were left out (a torn line), or what looks wrong with the shards; else ""

	// Files is how many files were read; Shards how many shards' lines were among them (0
	// when no line says "shard").
	Files, Shards int

	shardNotes []string
}

// LoadReplay reads the --record files the arguments name: files, globs, directories (their
// *.jsonl files). One file of one run replays in file order, as the live run saw its
// requests; several files, or the lines of several shards, merge on the wall clock. A torn
// line (a killed run) is not an error: the whole records are used and Warning says so, as it
// says when one of several files has no record. Any other unreadable line is an error naming
// its file and line.
func LoadReplay(args ...string) (*Replay, error) {
	paths, err := expand(args)
	if err != nil {
		return nil, err
	}
	var files []source
	var warnings []string
	for _, path := range paths {
		f, warning, err := readSource(path)
		switch {
		case err != nil:
			return nil, err
		case warning != "":
			warnings = append(warnings, warning)
		}
		if len(f.Records) == 0 {
			if len(paths) == 1 {
				return nil, fmt.Errorf("%s: no records (is it a --record file?)", path)
			}
			warnings = append(warnings, path+": no records; left out")
			continue
		}
		files = append(files, source{path: path, file: f})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no records in any of its %d files (are they --record files?)", strings.Join(args, " "), len(paths))
	}
	rp := merge(files)
	rp.Warning = strings.Join(append(warnings, rp.shardNotes...), "; ")
	return rp, nil
}

// readSource reads one file; warning names the torn lines left out.
func readSource(path string) (File, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return File{}, "", err
	}
	defer f.Close()
	file, err := ReadFile(f)
	switch {
	case errors.Is(err, ErrTruncated):
		return file, fmt.Sprintf("%s: %v; using the %d whole records", path, err, len(file.Records)), nil
	case err != nil:
		return File{}, "", fmt.Errorf("%s: %w", path, err)
	}
	return file, "", nil
}

// finishedAt is when a request finished on the wall clock: t0 + End, else its last instant.
func finishedAt(s *sample.Sample) time.Time {
	for _, d := range []time.Duration{s.End, s.LastToken, s.FirstEvent, s.Headers} {
		if d >= 0 {
			return s.Start.Add(d)
		}
	}
	return s.Start
}
