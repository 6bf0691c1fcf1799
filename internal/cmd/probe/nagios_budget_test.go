package probecmd

import (
	"context"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/cli/clitest"
	"github.com/healthctl/healthctl/internal/probe"
	"github.com/healthctl/healthctl/internal/render"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestNagiosBudget: with -o nagios, -t (else --max-time, else check_http's
// 10 s) is the whole check's budget and every window the probe has fits
// it, unless a window flag was given; without -o nagios nothing changes.
func TestNagiosBudget(t *testing.T) {
	for _, c := range []struct {
		args                   []string
		output                 string
		connect, read, maxTime time.Duration
	}{
		{[]string{"-t", "8"}, "nagios", 8 * time.Second, 8 * time.Second, 8 * time.Second},
		{[]string{"-t", "8", "--read-timeout", "1"}, "nagios", 8 * time.Second, time.Second, 8 * time.Second},
		{[]string{"-t", "8", "--connect-timeout", "500ms"}, "nagios", 500 * time.Millisecond, 8 * time.Second, 8 * time.Second},
		{[]string{"--max-time", "6"}, "nagios", 6 * time.Second, 6 * time.Second, 6 * time.Second},
		{nil, "nagios", 10 * time.Second, 10 * time.Second, 10 * time.Second},
		{nil, "text", scheme.DefaultConnectTimeout, scheme.DefaultReadTimeout, scheme.DefaultConnectTimeout + scheme.DefaultReadTimeout},
		{[]string{"--max-time", "6"}, "text", scheme.DefaultConnectTimeout, scheme.DefaultReadTimeout, 6 * time.Second},
	} {
		fk := clitest.New(nil, classify.Pass)
		if c.output == "nagios" {
			fk.F.Format = render.Nagios
		}
		var got *scheme.Options
		fk.F.Prober = func(_ context.Context, o *scheme.Options) probe.Result {
			got = o
			return clitest.Result(o.URL, classify.Pass)
		}
		Run(context.Background(), fk.F, parse(t, append(c.args, "http://127.0.0.1:1/health")...))
		if got == nil {
			t.Fatalf("%v -o %s: nothing probed: %s", c.args, c.output, fk.Err)
		}
		if got.ConnectTimeout != c.connect || got.ReadTimeout != c.read || got.MaxTime != c.maxTime {
			t.Errorf("%v -o %s: connect %v, read %v, max %v; want %v, %v, %v", c.args, c.output,
				got.ConnectTimeout, got.ReadTimeout, got.MaxTime, c.connect, c.read, c.maxTime)
		}
	}
}
