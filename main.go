// Command tokscope is a live terminal monitor of LLM inference speed: it streams prompts to
// OpenAI-compatible endpoints and shows time to first token, decode tokens/s, inter-token
// latency and errors per endpoint, live or as a headless summary.
//
// The command line lives in package cli (flags → endpoints → engine → UI or headless →
// exit status); main only hands it the process's arguments and streams.
package main

import (
	"os"

	"tokscope/cli"
)

// version is set with -ldflags "-X main.version=…"; else the module version is used.
var version = ""

func main() {
	os.Exit(cli.Main(version, os.Args[1:], os.Stdout, os.Stderr))
}
