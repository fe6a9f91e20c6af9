// Command commitfloor is the floor a `tollgate guard` process is measured
// against: a process that starts, opens the ledger with the writer
// settings tollgate uses (WAL, synchronous=FULL, foreign keys and
// recursive triggers on, an immediate transaction), durably records one
// intent with the seed fixture's bare INSERT, and exits. Nothing can
// record an intent in a new process with this stack for less. It is its
// own program, not a tollgate command, so that it links nothing tollgate
// links beyond the SQLite driver.
//
// Usage: commitfloor LEDGER KEY
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

// The writer settings of ledger.Open, spelled out: this program must not
// import the ledger package, whose start-up it is the floor for.
const pragmas = "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=recursive_triggers(1)" +
	"&_pragma=synchronous(FULL)&_pragma=journal_mode(WAL)&_txlock=immediate"

// A digest of the right shape; the floor measures the commit, not hashing.
const digest = "0000000000000000000000000000000000000000000000000000000000000000"

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: commitfloor LEDGER KEY")
		os.Exit(2)
	}
	if err := record(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "commitfloor:", err)
		os.Exit(1)
	}
}

func record(path, key string) error {
	db, err := sql.Open("sqlite", "file:"+path+pragmas)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec("INSERT INTO intents VALUES (?, ?, 'recorded') ON CONFLICT(action_key) DO NOTHING", key, digest); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
