package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"tokscope/promexport"
	"tokscope/sim"
)

// DefaultSimListen is where tokscope sim serves without --listen.
const DefaultSimListen = "8090"

// simCommand is `tokscope sim`: the built-in simulator on an address the user picks, for
// tokscope and any other client.
func simCommand() *command {
	return &command{
		name: "sim", summary: "serve the built-in simulator on an address, for tokscope or any client", usage: "sim [flags]",
		about: "Serves the built-in simulator until Ctrl-C or SIGTERM: five APIs, OpenAI chat, completions and\n" +
			"responses and Anthropic messages under /v1 (/v1/chat/completions, /v1/completions, /v1/responses,\n" +
			"/v1/messages) and Ollama chat at the root (/api/chat), the model named in each request choosing the\n" +
			"schedule: a demo profile by name, or any schedule written as a model name. /v1/models and /api/tags\n" +
			"list the models, /metrics serves vLLM's Prometheus families. No LLM server is needed to try any recipe.",
		flags: []string{"log"},
		own: func(fs *pflag.FlagSet, o *options) {
			fs.StringVar(&o.listen, "listen", DefaultSimListen, "serve on `ADDR`: a bare port or :PORT binds 127.0.0.1, HOST:PORT that host (0.0.0.0 every interface); port 0 picks a free one")
		},
		args: func(o *options, words []string) error {
			addr, err := promexport.ListenAddr(o.listen)
			if err != nil {
				return usagef("invalid value %q for --listen: must be a port like 8090, or HOST:PORT", o.listen)
			}
			o.listen = addr
			return noArgs(o, words)
		},
		after: scheduleHelp,
		run:   runSim,
	}
}

// scheduleHelp is the model-name syntax, for tokscope sim --help.
func scheduleHelp() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Models:\n  the demo's profiles by name:")
	for _, p := range simProfiles() {
		fmt.Fprintf(&b, " %s", p.Name)
	}
	fmt.Fprintf(&b, "\n  or a schedule, sim:KEY=VALUE,... e.g. sim:ttft=200ms,tps=50,chunk=2,slots=4,500=0.1 (each distinct name\n"+
		"  is one server of its own: its slots, batch, prefix cache and /metrics series). Keys (others are off;\n"+
		"  a BOOL key alone means true):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, k := range sim.ScheduleKeys() {
		name, help, _ := strings.Cut(k, "  ")
		fmt.Fprintf(tw, "    %s\t%s\n", name, help)
	}
	_ = tw.Flush()
	return b.String()
}

// runSim serves until the context ends (Ctrl-C, SIGTERM), after printing where and what.
func runSim(ctx context.Context, env *runEnv) int {
	srv, err := sim.Start(sim.Options{Listen: env.opts.listen}, simProfiles()...)
	if err != nil {
		fmt.Fprintf(env.stderr, "tokscope: --listen %s: %v\n", env.opts.listen, err)
		return ExitUsage
	}
	defer srv.Close()
	writeSimBanner(env.stdout, srv)
	<-ctx.Done()
	fmt.Fprintln(env.stderr, "tokscope: sim: stopped")
	return ExitOK
}

// simProfiles are the demo's profiles, each serving the model named as the profile: what a
// client names is what the answers and /metrics' model_name say, so that the server-side
// metrics of a run find their series.
func simProfiles() []sim.Profile {
	profiles := sim.DemoProfiles()
	for i := range profiles {
		profiles[i].Model = profiles[i].Name
	}
	return profiles
}

// writeSimBanner says where the simulator serves each API and which models it knows.
func writeSimBanner(w io.Writer, srv *sim.Server) {
	u := srv.URL()
	fmt.Fprintf(w, "tokscope sim: serving at %s until Ctrl-C or SIGTERM\n", u)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  chat, completions, responses, anthropic:\t%s/v1\n", u)
	fmt.Fprintf(tw, "  ollama:\t%s\n", u)
	fmt.Fprintf(tw, "  Prometheus (vLLM's families):\t%s/metrics\n", u)
	_ = tw.Flush()
	fmt.Fprintf(w, "models (-m NAME), or any schedule such as -m sim:ttft=200ms,tps=50 (tokscope sim --help):\n")
	for _, p := range simProfiles() {
		fmt.Fprintf(tw, "  %s\t%s\n", p.Name, sim.FormatSchedule(p))
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "e.g. tokscope -u %s/v1 -m %s\n", u, simProfiles()[0].Name)
}
