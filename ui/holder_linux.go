package ui

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/tollgate-dev/tollgate/safetext"
)

// walWriteLock is the byte of the -shm file that SQLite's WAL writer
// locks (WALINDEX_LOCK_OFFSET 120, WAL_WRITE_LOCK 0).
const walWriteLock = 120

// lockHolder names the other process that holds the ledger file's write
// lock, from /proc/locks: a POSIX write lock on the -shm file's writer
// byte (WAL mode) or on the database file itself (a rollback journal's
// reserved or exclusive lock). It reads /proc and stats, and never opens
// the ledger or its -shm (which would drop this process's SQLite locks).
// "" when nobody else holds it, or for a ledger that is not a file.
func lockHolder(file string) string {
	if file == "" {
		return ""
	}
	type target struct {
		dev, ino uint64
		wal      bool
	}
	var targets []target
	for _, p := range []string{file + "-shm", file} {
		if fi, err := os.Stat(p); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				targets = append(targets, target{dev: uint64(st.Dev), ino: st.Ino, wal: strings.HasSuffix(p, "-shm")})
			}
		}
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return ""
	}
	defer f.Close()
	self := os.Getpid()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 1: POSIX  ADVISORY  WRITE 4242 fe:00:9995762 120 120
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[1] == "->" || fs[3] != "WRITE" {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid == self || pid <= 0 {
			continue
		}
		dev, ino, ok := parseLockDev(fs[5])
		if !ok {
			continue
		}
		start, _ := strconv.ParseInt(fs[6], 10, 64)
		for _, t := range targets {
			if t.ino == ino && t.dev == dev && (!t.wal || start == walWriteLock) {
				return describePID(pid)
			}
		}
	}
	return ""
}

// parseLockDev reads /proc/locks' MAJOR:MINOR:INODE (hex, hex, decimal)
// as a device number in the kernel's encoding, as stat gives it.
func parseLockDev(s string) (dev, ino uint64, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, 0, false
	}
	major, err1 := strconv.ParseUint(parts[0], 16, 32)
	minor, err2 := strconv.ParseUint(parts[1], 16, 32)
	ino, err3 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, 0, false
	}
	dev = (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
	return dev, ino, true
}

// describePID is "pid 4242 (tollgate guard refund:x)": the process's
// command line, its first words, escaped and cut.
func describePID(pid int) string {
	out := fmt.Sprintf("pid %d", pid)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return out
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	args[0] = args[0][strings.LastIndex(args[0], "/")+1:]
	cmd := safetext.Escape(strings.Join(args[:min(len(args), 3)], " "))
	if len(args) > 3 {
		cmd += " …"
	}
	return out + " (" + cutMiddle(cmd, 40) + ")"
}
