package ui

import (
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// KeyMap is every key binding of the UI. Keys are matched with key.Matches only.
type KeyMap struct {
	Help, Quit                                        key.Binding
	NextView, PrevView                                key.Binding
	Dashboard, Compare, Detail, Stream, Sweep, Lanes  key.Binding
	Up, Down, Left, Right                             key.Binding
	Enter, Back                                       key.Binding
	Pause, PauseAll, Reset, MoreStreams, FewerStreams key.Binding
	Sort, SortReverse                                 key.Binding
	Prompt, Race                                      key.Binding
	Report                                            key.Binding // write the HTML report
	// Confirm answers yes to a question in the footer (reset the statistics?); CloseHelp
	// names the keys that close the help screen (Help and Back) in its footer.
	Confirm, CloseHelp key.Binding

	// While the prompt input has focus only these act; every other key is text.
	Submit, Blur, ForceQuit key.Binding
}

// DefaultKeyMap returns the documented bindings.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Help:         b("?", "help", "?"),
		Quit:         b("q", "quit", "q", "ctrl+c"),
		NextView:     b("tab", "next view", "tab"),
		PrevView:     b("shift+tab", "prev view", "shift+tab"),
		Dashboard:    b("1", "dashboard", "1"),
		Compare:      b("2", "compare", "2"),
		Detail:       b("3", "detail", "3"),
		Stream:       b("4", "stream", "4"),
		Sweep:        b("5", "sweep", "5"),
		Lanes:        b("6", "lanes", "6"),
		Up:           b("↑/k", "up", "up", "k"),
		Down:         b("↓/j", "down", "down", "j"),
		Left:         b("←/h", "left", "left", "h"),
		Right:        b("→/l", "right", "right", "l"),
		Enter:        b("enter", "detail", "enter"),
		Back:         b("esc", "back", "esc"),
		Pause:        b("p", "pause", "p"),
		PauseAll:     b("P", "pause all", "P"),
		Reset:        b("r", "reset stats (asks)", "r"),
		MoreStreams:  b("+", "concurrency +1", "+", "="),
		FewerStreams: b("-", "concurrency -1", "-", "_"),
		Sort:         b("s", "sort column", "s"),
		SortReverse:  b("S", "reverse sort", "S"),
		Prompt:       b("/", "prompt", "/"),
		Race:         b("ctrl+r", "race all", "ctrl+r"),
		Report:       b("w", "write HTML report", "w"),
		Confirm:      b("y", "yes", "y"),
		CloseHelp:    b("esc/?", "close help", "esc", "?"),

		Submit:    b("enter", "stream to selected", "enter"),
		Blur:      b("esc", "leave prompt", "esc"),
		ForceQuit: b("ctrl+c", "quit", "ctrl+c"),
	}
}

// ShortHelp is the footer line (help.KeyMap).
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Help, k.NextView, k.Enter, k.Pause, k.Prompt, k.Quit}
}

// FullHelp is the `?` screen (help.KeyMap), one column per concern.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.NextView, k.PrevView, k.Dashboard, k.Compare, k.Detail, k.Stream, k.Sweep, k.Lanes, k.Enter, k.Back},
		{k.Up, k.Down, k.Left, k.Right, k.Sort, k.SortReverse},
		{k.Pause, k.PauseAll, k.MoreStreams, k.FewerStreams, k.Reset, k.Report},
		{k.Prompt, k.Submit, k.Race, k.Blur, k.Help, k.Quit},
	}
}

// viewKeys are the keys that show each view, by view.
func (k *KeyMap) viewKeys() [nViews]key.Binding {
	return [nViews]key.Binding{
		viewDashboard: k.Dashboard,
		viewCompare:   k.Compare,
		viewDetail:    k.Detail,
		viewStream:    k.Stream,
		viewSweep:     k.Sweep,
		viewLanes:     k.Lanes,
	}
}

// Some keys work only when the session has what they drive: without the Runner's Controls (a
// replay, a read-only monitor) nothing can be paused, resized or streamed, and without a
// Reporter no report written. This is said once, here, as data: the model disables those bindings (the
// help and the footers then leave them out) and says why when one is pressed.

// requirement is a set of bindings that need one thing, and the notice when it is missing.
// typing are bindings of the prompt input, which cannot get focus without it: disabled too,
// but never explained (their keys are enter and esc, which do other things elsewhere).
type requirement struct {
	keys, typing []*key.Binding
	why          string
}

// noControlsNotice is what a key that needs the Runner's Controls says without them (the
// user's word for the Runner is the engine).
const noControlsNotice = "no engine: read-only monitor"

// controlKeys are the bindings that drive the Runner through its Controls.
func (k *KeyMap) controlKeys() requirement {
	return requirement{
		keys:   []*key.Binding{&k.Pause, &k.PauseAll, &k.MoreStreams, &k.FewerStreams, &k.Prompt, &k.Race},
		typing: []*key.Binding{&k.Submit, &k.Blur},
		why:    noControlsNotice,
	}
}

// reporterKeys are the bindings that need a Reporter.
func (k *KeyMap) reporterKeys() requirement {
	return requirement{keys: []*key.Binding{&k.Report}, why: "no report writer in this session"}
}

// disable turns r's bindings off; the model keeps r to explain them (unavailable).
func (r requirement) disable() requirement {
	for _, b := range append(r.keys, r.typing...) {
		b.SetEnabled(false)
	}
	return r
}

// unavailable is why msg does nothing in this session, when it is one of the bindings a
// missing requirement disabled ("" otherwise).
func unavailable(msg tea.KeyMsg, missing []requirement) string {
	for _, r := range missing {
		for _, b := range r.keys {
			on := *b
			on.SetEnabled(true)
			if key.Matches(msg, on) {
				return r.why
			}
		}
	}
	return ""
}
