package main

import (
	"context"
	"errors"

	"github.com/tollgate-dev/tollgate/cli"
)

func runConsole(ctx context.Context, opt cli.ConsoleOptions) error {
	return errors.New("console not built yet")
}

func runDemo(ctx context.Context, opt cli.DemoOptions) error {
	return errors.New("demo not built yet")
}
