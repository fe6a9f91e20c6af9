package service_test

import (
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tollgate-dev/tollgate/service"
)

// TestListen: plain HTTP only on a loopback address; a socket is 0660 in
// its group from the start, replaces a stale socket and refuses a live
// one or a file that is not a socket.
func TestListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "localhost:0", "192.0.2.1:0"} {
		if ln, err := service.Listen(addr, service.SocketPolicy{}, nil); err == nil {
			ln.Close()
			t.Errorf("plain HTTP on %s was allowed", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("%s: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := service.Listen(addr, service.SocketPolicy{}, nil)
		if err != nil {
			if addr == "[::1]:0" {
				continue // no IPv6 here
			}
			t.Fatalf("%s: %v", addr, err)
		}
		ln.Close()
	}

	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	group := ""
	if os.Geteuid() == 0 {
		if g, err := user.LookupGroupId("65534"); err == nil {
			group = g.Name
		}
	}
	ln, err := service.Listen("unix:"+sock, service.SocketPolicy{Group: group}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm() != 0o660 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %v %v", fi.Mode(), err)
	}
	if group != "" {
		if gid := fi.Sys().(*syscall.Stat_t).Gid; strconv.Itoa(int(gid)) != "65534" {
			t.Fatalf("socket group %d, want 65534", gid)
		}
	}
	if _, err := service.Listen("unix:"+sock, service.SocketPolicy{}, nil); err == nil || !strings.Contains(err.Error(), "another server") {
		t.Fatalf("a live socket: %v", err)
	}
	// A listener that went away without removing its socket: replaced.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln, err = service.Listen("unix:"+sock, service.SocketPolicy{}, nil)
	if err != nil {
		t.Fatalf("a stale socket: %v", err)
	}
	ln.Close()
	plain := filepath.Join(dir, "file")
	os.WriteFile(plain, []byte("x"), 0o600)
	if _, err := service.Listen("unix:"+plain, service.SocketPolicy{}, nil); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("a plain file: %v", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "x" {
		t.Fatal("the plain file was changed")
	}
	if _, err := service.Listen("unix:"+filepath.Join(dir, "g.sock"), service.SocketPolicy{Group: "no-such-group-tollgate"}, nil); err == nil {
		t.Fatal("an unknown group was accepted")
	}
}
