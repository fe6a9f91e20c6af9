//go:build agent

package main

import (
	"context"

	"github.com/tollgate-dev/tollgate/cli"
)

// The agent build (go build -tags agent): the commands agents run (guard,
// record, report, status, mcp and the rest) without the console and the
// demo, so a process that guards one action neither links nor initializes
// Bubble Tea, Lip Gloss or the clipboard, and starts faster. With these
// left nil, console and demo say the build has none.
var (
	runConsole func(context.Context, cli.ConsoleOptions) error
	runDemo    func(context.Context, cli.DemoOptions) error
)
