package ui

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/tollgate-dev/tollgate/internal/benchledger"
	"github.com/tollgate-dev/tollgate/ledger"
)

// drain runs a command and everything it batches, feeding each message to
// the model, the way the Bubble Tea runtime would (ticks excluded: the
// benchmark calls no command that sleeps).
func drain(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case tea.BatchMsg:
		for _, c := range msg {
			drain(m, c)
		}
	case nil:
	default:
		_, next := m.Update(msg)
		drain(m, next)
	}
}

// rssMB reads this process's resident set from /proc.
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// BenchmarkConsoleMillion opens the console on a ledger of 1,000,000
// actions with 10,000 pending and measures the first frame (counts, the
// first page, the selected row's detail, rendered), the resident set, and
// moving the selection (re-render, then the new detail).
func BenchmarkConsoleMillion(b *testing.B) {
	path, err := benchledger.Path(1_000_000, 10_000)
	if err != nil {
		b.Fatal(err)
	}
	s, err := ledger.Open(ctx, path, ledger.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var first, render, detail, all time.Duration
	var rss float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		m, err := New(Options{Store: s, Operator: "bench", ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		drain(m, m.snapshot())
		if !strings.Contains(m.View(), "refund") {
			b.Fatal("first frame has no pending row")
		}
		first += time.Since(start)
		rss = max(rss, rssMB())

		start = time.Now()
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyDown})
		_ = m.View()
		render += time.Since(start)
		drain(m, cmd)
		_ = m.View()
		detail += time.Since(start)

		start = time.Now()
		drain(m, m.switchView(viewAll))
		_ = m.View()
		all += time.Since(start)
		m.Close()
	}
	n := float64(b.N)
	// The targets of the console's scale requirement.
	if first/time.Duration(b.N) > 500*time.Millisecond || detail/time.Duration(b.N) > 50*time.Millisecond || rss > 150 {
		b.Errorf("over target: first frame %v, move %v, rss %.0f MB", first/time.Duration(b.N), detail/time.Duration(b.N), rss)
	}
	b.ReportMetric(float64(first.Microseconds())/1000/n, "first-frame-ms")
	b.ReportMetric(float64(render.Microseconds())/1000/n, "move-render-ms")
	b.ReportMetric(float64(detail.Microseconds())/1000/n, "move-with-detail-ms")
	b.ReportMetric(float64(all.Microseconds())/1000/n, "all-view-ms")
	b.ReportMetric(rss, "rss-MB")
}
