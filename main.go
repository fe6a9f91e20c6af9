// Command tollgate keeps AI agents' consequential actions idempotent and
// human-approved: agents guard each action under a stable key in a shared
// SQLite ledger, operators approve, reject and reconcile in a terminal
// console, and tollgate never performs an action itself.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tollgate-dev/tollgate/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Env{
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Console: runConsole,
		Demo:    runDemo,
	})
	stop()
	os.Exit(code)
}
