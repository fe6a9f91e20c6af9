package ui

import (
	"bufio"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// lockHolderEnv names the ledger that this test binary, re-run, holds
// the write lock of: another process, as an agent writing would be.
const lockHolderEnv = "TOLLGATE_UI_TEST_HOLD_LOCK"

// holdLockChild takes the write lock of the ledger at path, says
// "locked" on standard output, and holds it until standard input ends.
func holdLockChild(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tx.Rollback()
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// holdLockElsewhere runs this test binary as another process holding
// the ledger's write lock; it returns the process and what releases it.
func holdLockElsewhere(t *testing.T) (*exec.Cmd, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"=ledger.db")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "locked\n" {
		in.Close()
		cmd.Wait()
		t.Fatalf("the lock holder said %q: %v", line, err)
	}
	released := false
	release := func() {
		if !released {
			released = true
			in.Close()
			cmd.Wait()
		}
	}
	t.Cleanup(release)
	return cmd, release
}
