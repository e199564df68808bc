package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"tokscope/sample"
)

// The stream view's input: its keys (/ edits the prompt, enter streams it, ctrl+r races it;
// while the prompt has focus every key is text but the typing bindings) and the events of
// its interactive streams.

// Captures: while the prompt has focus, keys are text.
func (v *streamView) Captures() bool { return v.Typing() }

// Owns: the prompt and race keys from anywhere (they show the view), enter while it shows.
func (v *streamView) Owns(msg tea.KeyMsg, shown bool) bool {
	k := v.keys
	return key.Matches(msg, k.Prompt, k.Race) || shown && key.Matches(msg, k.Enter)
}

func (v *streamView) HandleKey(msg tea.KeyMsg, f *frame, _ bool) keyResult {
	k := v.keys
	switch {
	case v.Typing() && key.Matches(msg, k.Submit), !v.Typing() && key.Matches(msg, k.Enter):
		return v.startStream(f, false)
	case key.Matches(msg, k.Race):
		return v.startStream(f, true)
	case v.Typing() && key.Matches(msg, k.Blur):
		v.Blur()
		return keyResult{}
	case v.Typing():
		return keyResult{cmd: v.Input(msg)}
	case key.Matches(msg, k.Prompt):
		return keyResult{cmd: v.Focus()}
	}
	return keyResult{}
}

// startStream sends the prompt to the selected endpoint, or races it on all of them.
func (v *streamView) startStream(f *frame, race bool) keyResult {
	if v.controls == nil {
		return keyResult{notice: noControlsNotice, bad: true}
	}
	if len(v.eps) == 0 {
		return keyResult{}
	}
	prompt := v.Prompt()
	if prompt == "" {
		return keyResult{notice: "type a prompt first (/)", bad: true}
	}
	v.Blur()
	var id uint64
	eps := []int{f.sel}
	if race {
		id = v.controls.Race(prompt)
		eps = make([]int, len(v.eps))
		for i := range eps {
			eps[i] = i
		}
	} else {
		id = v.controls.Stream(sample.EndpointIndex(f.sel), prompt)
	}
	if id == 0 { // the Runner has stopped
		return keyResult{notice: "could not start the stream: the probes have stopped", bad: true}
	}
	v.Begin(id, race, eps, v.eps, f.now)
	return keyResult{}
}

// Observe takes the events of interactive streams (Stream != 0); the background requests'
// are the statistics'.
func (v *streamView) Observe(ev sample.Event) bool {
	switch ev := ev.(type) {
	case *sample.Started:
		if ev.Stream != 0 {
			v.Started(ev)
			return true
		}
	case *sample.Delta:
		if ev.Stream != 0 {
			v.Delta(ev)
			return true
		}
	case *sample.Progress:
		if ev.Stream != 0 {
			v.Progress(ev)
			return true
		}
	case *sample.Done:
		if ev.Stream != 0 {
			v.Done(ev)
			return true
		}
	}
	return false
}
