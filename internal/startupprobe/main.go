// Command startupprobe starts and exits at once, linking only the SQLite
// driver and, with a build tag, one of tollgate's heavy dependencies: the
// time it takes, beside tollgate's own start-up, says what each
// dependency's package initialisation and pages cost every process
// (BenchmarkStartupByDependency in package cli). It is its own program so
// that it links nothing else.
//
// Tags: probe_cel (cel-go, the policy language), probe_mcp (the MCP SDK),
// probe_console (bubbletea, bubbles, lipgloss), probe_pgx (pgx's
// database/sql driver, as ledger/postgres links it); all four together
// are the dependencies without tollgate's own code.
package main

import _ "modernc.org/sqlite"

func main() {}
