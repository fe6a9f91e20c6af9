//go:build !agent

package main

import (
	"context"

	"github.com/tollgate-dev/tollgate/cli"
	"github.com/tollgate-dev/tollgate/demo"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/ui"
)

// runConsole and runDemo link the console (Bubble Tea, Lip Gloss and the
// clipboard) into the binary; a build with -tags agent leaves them out
// (wiring_agent.go).
func runConsole(ctx context.Context, opt cli.ConsoleOptions) error {
	locked := make([]ui.LockedKey, len(opt.Locked))
	for i, k := range opt.Locked {
		locked[i] = k
	}
	return ui.Run(ctx, opt.DB, opt.Ledger, ui.Options{Operator: opt.Operator, ReadOnly: opt.ReadOnly, Locked: locked})
}

// runStore is the demo's console: the demo hands it the store it made.
func runStore(ctx context.Context, s *ledger.Store, operator string, readOnly bool) error {
	return ui.RunStore(ctx, s, operator, readOnly)
}

func runDemo(ctx context.Context, opt cli.DemoOptions) error {
	return demo.Run(ctx, demo.Options{DB: opt.DB, Operator: opt.Operator, Headless: opt.Headless, Console: runStore})
}
