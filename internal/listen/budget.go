package listen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/scheme"
)

// ScrapeTimeoutHeader is the header in which Prometheus sends a scrape's
// timeout, in seconds.
const ScrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// The budget's figures, blackbox_exporter's: a scrape without the header
// is taken to allow NoScrapeTimeout; the probe ends ScrapeOffset before
// the scrape's timeout, so that its answer reaches the scraper in time.
// MaxBudget bounds what a header or a module can ask for, and MinBudget
// is what a scrape shorter than the offset still gets.
const (
	NoScrapeTimeout = 120 * time.Second
	ScrapeOffset    = 500 * time.Millisecond
	MaxBudget       = 10 * time.Minute
	MinBudget       = 100 * time.Millisecond
)

// Budget is how long a /probe request may take, blackbox's rule: the
// scrape's timeout (header, in seconds; NoScrapeTimeout without it or at
// 0) less ScrapeOffset, or the module's timeout when it is set and
// shorter. The probe's windows (connect, read, whole) all fit in it, and
// a wait for a probe slot comes out of it: the answer is written before
// the scraper gives up. A header that is not a number of seconds is an
// error (the request is refused: 400).
func Budget(header string, module time.Duration) (time.Duration, error) {
	scrape := NoScrapeTimeout
	if h := strings.TrimSpace(header); h != "" {
		f, err := strconv.ParseFloat(h, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, fmt.Errorf("%s %s: want a number of seconds", ScrapeTimeoutHeader, strconv.Quote(output.Bounded(output.Untrusted(header), 40)))
		}
		if f > 0 {
			scrape = time.Duration(min(f, MaxBudget.Seconds()+1) * float64(time.Second))
		}
	}
	b := scrape - ScrapeOffset
	if module > 0 && (module < b || b <= 0) {
		b = module
	}
	return min(max(b, MinBudget), MaxBudget), nil
}

// fit fits a probe's windows in d: none may outlast the budget.
func fit(o *scheme.Options, d time.Duration) {
	d = max(d, time.Millisecond)
	o.MaxTime = d
	o.ConnectTimeout = min(o.ConnectTimeout, d)
	o.ReadTimeout = min(o.ReadTimeout, d)
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = d
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = d
	}
}
