package service

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tollgate-dev/tollgate/safetext"
)

// Timeouts of the HTTP server: a client gets this long to send its
// headers, and an idle kept-alive connection is closed after IdleTimeout.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 60 * time.Second
	IdleTimeout       = 120 * time.Second
)

// Listen opens a listener for an --listen address: "unix:PATH" (a socket
// file 0660, in group policy.Group when set) or "HOST:PORT", served with
// TLS when tlsConfig is not nil and refused without it unless the host is
// a loopback address.
func Listen(addr string, policy SocketPolicy, tlsConfig *tls.Config) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return listenUnix(path, policy.Group)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: unix:PATH or HOST:PORT (%v)", safetext.Escape(addr), err)
	}
	if tlsConfig == nil && !isLoopback(host) {
		return nil, fmt.Errorf("--listen %s: plain HTTP only on a loopback address (127.0.0.1, ::1); give --tls-cert and --tls-key to listen elsewhere", safetext.Escape(addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return ln, nil
}

// isLoopback reports whether host is a loopback IP address (a name is
// not: what it resolves to can change).
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// umaskMu serializes the umask change around a socket's creation.
var umaskMu sync.Mutex

// listenUnix creates the socket at path, readable and writable by its
// owner and group only from the moment it exists. A stale socket (no
// server answers on it) is replaced; a live one, or any other file, is
// refused.
func listenUnix(path, group string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("--listen unix:%s: the path exists and is not a socket", safetext.Escape(path))
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("--listen unix:%s: another server is listening there", safetext.Escape(path))
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	gid := -1
	if group != "" {
		g, err := lookupGroup(group)
		if err != nil {
			return nil, fmt.Errorf("--socket-group: %w", err)
		}
		if gid, err = strconv.Atoi(g.Gid); err != nil {
			return nil, fmt.Errorf("--socket-group: gid %s", g.Gid)
		}
	}
	umaskMu.Lock()
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	umaskMu.Unlock()
	if err != nil {
		return nil, err
	}
	if gid >= 0 {
		if err := os.Chown(path, -1, gid); err != nil {
			ln.Close()
			return nil, fmt.Errorf("--socket-group: %w", err)
		}
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// Serve serves on every listener until ctx ends, then stops accepting,
// lets the calls in flight finish (each answer is sent after its commit)
// for at most drain, and returns. Calls run under a context of their own,
// not ctx: a SIGTERM must not cut a call between its commit and its
// answer.
func (s *Server) Serve(ctx context.Context, drain time.Duration, lns ...net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		IdleTimeout:       IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnContext:       s.ConnContext,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          log.New(cmp.Or[io.Writer](s.cfg.Log, io.Discard), "tollgate serve: ", 0),
	}
	// Shutdown and Close close only the listeners hs.Serve has begun on: a
	// signal that comes before a goroutine below has started would leave
	// its listener open and, on a Unix socket, its file behind. Closing
	// each on return (a second Close is harmless) unlinks every socket
	// this server made before Serve returns.
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- hs.Serve(ln) }()
	}
	select {
	case err := <-errc:
		hs.Close()
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		hs.Close()
		return fmt.Errorf("calls still in flight after %s were cut off", drain)
	}
	return err
}
