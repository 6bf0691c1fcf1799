package watchcmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/exitcode"
	"github.com/healthctl/healthctl/internal/fixture"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
)

// BenchmarkWatchOnce is `watch --once --targets FILE --state --prom-file -o
// json` in-process with the real prober, over WATCH_BENCH_N targets
// (default 1,000; in the users' shapes, usersTargets, or with
// WATCH_BENCH_SHAPE=block the plainest block style, =headers a Host and a
// token of each entry's own; WATCH_BENCH_URLS=query
// their URLs differing by a query string, not a path) served by one loopback server: the whole command as the
// binary runs it (targets file, options per target, sweep, state, metrics,
// JSON lines), without the process start. Run it with -cpuprofile and
// -memprofile; WATCH_BENCH_HEAP=FILE also writes the live heap at the
// moment the last probe returns (every result held), which is what a big
// sweep's peak is made of. WATCH_BENCH_SERVER=HOST:PORT (a loopback nginx)
// is probed instead of the in-process server, and WATCH_BENCH_PROBER=floor
// puts the Go floor's exchange (floorProbe) in place of probe.Run: the
// difference is what probe.Run costs over the bare exchange, the rest is
// the command around it.
func BenchmarkWatchOnce(b *testing.B) {
	n := 1000
	if v := os.Getenv("WATCH_BENCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 || n > 200000 {
			b.Fatalf("WATCH_BENCH_N=%q: want 1..200000", v)
		}
	}
	addr := os.Getenv("WATCH_BENCH_SERVER")
	if addr != "" {
		if host, _, err := net.SplitHostPort(addr); err != nil || net.ParseIP(host) == nil || !net.ParseIP(host).IsLoopback() {
			b.Fatalf("WATCH_BENCH_SERVER=%q: want a loopback HOST:PORT", addr)
		}
	} else {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") }),
			ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(l)
		defer srv.Close()
		addr = l.Addr().String()
	}
	prober := probe.Run
	switch v := os.Getenv("WATCH_BENCH_PROBER"); v {
	case "", "probe":
	case "floor":
		prober = floorProbe
	default:
		b.Fatalf("WATCH_BENCH_PROBER=%q: want probe or floor", v)
	}
	dir := b.TempDir()
	file := filepath.Join(dir, "targets.yaml")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	switch v := os.Getenv("WATCH_BENCH_SHAPE"); v {
	case "", "users":
		data := usersTargets(n, addr)
		if os.Getenv("WATCH_BENCH_URLS") == "query" {
			// URLs that differ by a query string, every fourth with a
			// secret parameter (benchwatch -urls query).
			k := 0
			data = svcPath.ReplaceAllFunc(data, func(m []byte) []byte {
				k++
				q := "/health?full=1&env=" + string(svcPath.FindSubmatch(m)[1])
				if k%4 == 2 {
					q += "&token=s3cret-" + strconv.Itoa(k)
				}
				return []byte(q)
			})
		}
		w.Write(data)
	case "headers":
		// Every entry a Host and a token of its own (benchwatch -shape headers).
		w.WriteString("targets:\n")
		for i := range n {
			fmt.Fprintf(w, "  - name: env-%d\n    url: \"http://%s/health?full=1&env=%d\"\n    headers:\n      - \"Host: env-%d.fleet.invalid\"\n      - \"Authorization: Bearer tok-%d\"\n", i, addr, i, i, i)
		}
	case "block":
		w.WriteString("targets:\n")
		for i := range n {
			fmt.Fprintf(w, "  - name: env-%d\n    url: http://%s/env/%d/health\n", i, addr, i)
		}
	default:
		b.Fatalf("WATCH_BENCH_SHAPE=%q: want users, headers or block", v)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	heap := os.Getenv("WATCH_BENCH_HEAP")
	b.ReportAllocs()
	for b.Loop() {
		os.Remove(filepath.Join(dir, "state.json"))
		fk := clitest.New(nil, classify.Pass)
		fk.F.Format = render.JSON
		fk.F.Streams.Out = io.Discard
		var done atomic.Int64
		fk.F.Prober = func(ctx context.Context, o *scheme.Options) probe.Result {
			r := prober(ctx, o)
			if done.Add(1) == int64(n) && heap != "" {
				runtime.GC()
				if hf, err := os.Create(heap); err == nil {
					pprof.WriteHeapProfile(hf)
					hf.Close()
				}
			}
			return r
		}
		err := Run(context.Background(), fk.F, parse(b, "--once", "--targets", file, "--state", filepath.Join(dir, "state.json"),
			"--prom-file", filepath.Join(dir, "metrics.prom")))
		if code := clitest.Code(err); code != exitcode.Pass {
			b.Fatalf("exit %d: %v; stderr %s", code, err, fk.Err.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/target")
}

// floorProbe is the Go floor's exchange (fixture.FloorGet) as a prober: a
// 200 passes, anything else is refused.
// svcPath is a path of usersTargets' URLs.
var svcPath = regexp.MustCompile(`/svc/([0-9]+)/health`)

func floorProbe(_ context.Context, o *scheme.Options) probe.Result {
	r := probe.Result{URL: o.URL.String(), Started: time.Now(), Timings: probe.Timings{},
		Outcome: classify.Unreachable, Reason: classify.ConnRefused}
	if fixture.FloorGet(o.URL.Host, o.URL.String()) == nil {
		r.Outcome, r.Reason, r.HTTPStatus = classify.Pass, classify.OK, http.StatusOK
	}
	return r
}
