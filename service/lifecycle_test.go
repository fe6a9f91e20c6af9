package service_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tollgate-dev/tollgate/internal/pgtest"
	"github.com/tollgate-dev/tollgate/ledger"
	"github.com/tollgate-dev/tollgate/service"
)

// slow is a ledger whose guards wait until released: calls in flight at
// a shutdown.
type slow struct {
	service.Ledger
	started chan struct{}
	release chan struct{}
}

func (s slow) Guard(ctx context.Context, key string, p ledger.Payload, opt ledger.GuardOptions) (ledger.Answer, error) {
	s.started <- struct{}{}
	<-s.release
	return s.Ledger.Guard(ctx, key, p, opt)
}

// TestShutdownDrains: when the serving context ends (SIGTERM in `serve`)
// a call in flight still commits and gets its answer; new connections
// are refused; Serve returns once it is answered.
func TestShutdownDrains(t *testing.T) {
	f := newFixture(t, service.Config{})
	led := slow{Ledger: f.store, started: make(chan struct{}, 4), release: make(chan struct{})}
	srv := service.NewServer(service.Config{Ledger: led, Credentials: newTokens()})
	ln, err := service.Listen("127.0.0.1:0", service.SocketPolicy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, 10*time.Second, ln) }()
	c, _ := service.NewClient("http://"+ln.Addr().String(), service.ClientOptions{Token: "tok-bot1"})
	answered := make(chan error, 1)
	go func() {
		a, err := c.Guard(context.Background(), "refund:drain", ledger.Payload{Kind: "refund", Target: "t", Body: "b"}, ledger.GuardOptions{})
		if err == nil && a.Verdict != ledger.Permitted {
			err = fmt.Errorf("verdict %s", a.Verdict)
		}
		answered <- err
	}()
	<-led.started
	cancel() // SIGTERM
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-served:
		t.Fatalf("Serve returned with a call in flight: %v", err)
	default:
	}
	if conn, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		conn.Close()
		t.Fatalf("a new connection was accepted while draining")
	}
	close(led.release)
	if err := <-answered; err != nil {
		t.Fatalf("the call in flight: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if d, err := f.store.Status(context.Background(), "refund:drain"); err != nil || d.PermitID == "" {
		t.Fatalf("the drained call's permit: %+v %v", d, err)
	}
}

// TestServeSIGTERM: `tollgate serve` exits 0 on SIGTERM and removes its
// socket.
func TestServeSIGTERM(t *testing.T) {
	home := t.TempDir()
	db := filepath.Join(home, "ledger.db")
	sock := filepath.Join(home, "s.sock")
	srv := startServer(t, db, home, "--listen", "unix:"+sock, "--socket-user", me(t))
	srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-srv.done:
		srv.done <- err
		if err != nil {
			t.Fatalf("serve after SIGTERM: %v\n%s", err, srv.log())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the socket is still there: %v", err)
	}
}

// hammer runs workers that guard keys through the service until stopped
// or the server is gone, and returns every permit acknowledged to them,
// counting each in acks as it comes.
func hammer(t *testing.T, urls []string, workers int, keys int, stop <-chan struct{}, acks *atomic.Int64) map[string][]string {
	var mu sync.Mutex
	acked := map[string][]string{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := service.NewClient(urls[w%len(urls)], service.ClientOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			fails := 0
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				// Two workers share each key; keys 0 means a new pair of
				// keys every round, so the load lasts until it is stopped.
				n := (i*workers + w) / 2
				if keys > 0 {
					n %= keys
				}
				key := fmt.Sprintf("refund:k%d", n)
				a, err := c.Guard(context.Background(), key, ledger.Payload{Kind: "refund", Target: "t", Body: key}, ledger.GuardOptions{})
				if err != nil {
					if fails++; fails > 20 {
						return // the server is gone
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if a.PermitID != "" {
					mu.Lock()
					acked[key] = append(acked[key], a.PermitID)
					mu.Unlock()
					acks.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return acked
}

// checkAcked opens the ledger and checks that every acknowledged permit
// is stored as its key's permit, no key was acknowledged two permits, and
// verify is clean.
func checkAcked(t *testing.T, db string, acked map[string][]string) {
	t.Helper()
	s, err := ledger.Open(context.Background(), db, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for key, ps := range acked {
		if len(ps) != 1 {
			t.Errorf("%s: %d permits acknowledged: %v", key, len(ps), ps)
		}
		d, err := s.Status(context.Background(), key)
		if err != nil || d.PermitID != ps[0] {
			t.Errorf("%s: acknowledged permit %s, stored %q (%v)", key, ps[0], d.PermitID, err)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no permit was acknowledged: the load never ran")
	}
	r, err := s.Verify(context.Background())
	if err != nil || !r.OK() {
		t.Fatalf("verify: %v %+v", err, r.Problems)
	}
	t.Logf("%d acknowledged permits, all stored; verify clean over %d events", n, r.Events)
}

// TestServeSIGKILLUnderLoad: the server killed while agents guard through
// it loses nothing it acknowledged: each answer is sent after its commit.
func TestServeSIGKILLUnderLoad(t *testing.T) {
	home := t.TempDir()
	db := backendDB(t, home)
	seedPolicy(t, db)
	sock := filepath.Join(home, "s.sock")
	srv := startServer(t, db, home, "--listen", "unix:"+sock, "--socket-user", me(t), "--rate", "0")
	stop := make(chan struct{})
	var acks atomic.Int64
	go func() {
		// Killed once the load is running (30 permits acknowledged; on a
		// slow machine or database, after 20 s whatever the count).
		for deadline := time.Now().Add(20 * time.Second); acks.Load() < 30 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		srv.cmd.Process.Signal(syscall.SIGKILL)
		time.Sleep(300 * time.Millisecond)
		close(stop)
	}()
	acked := hammer(t, []string{"unix://" + sock}, 8, 0, stop, &acks)
	checkAcked(t, db, acked)
}

// TestTwoServersOnePostgres: two servers over one PostgreSQL database,
// agents racing on the same keys through both: one permit per key, every
// acknowledged permit stored, verify clean.
func TestTwoServersOnePostgres(t *testing.T) {
	if os.Getenv("TOLLGATE_TEST_PG") == "" {
		t.Skip("TOLLGATE_TEST_PG is not set")
	}
	home := t.TempDir()
	db := pgtest.DB(t)
	seedPolicy(t, db)
	var urls []string
	for i := range 2 {
		sock := filepath.Join(home, fmt.Sprintf("s%d.sock", i))
		startServer(t, db, home, "--listen", "unix:"+sock, "--socket-user", me(t), "--rate", "0")
		urls = append(urls, "unix://"+sock)
	}
	stop := make(chan struct{})
	go func() {
		time.Sleep(1500 * time.Millisecond)
		close(stop)
	}()
	acked := hammer(t, urls, 8, 40, stop, new(atomic.Int64))
	checkAcked(t, db, acked)
}
