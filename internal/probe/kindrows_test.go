package probe

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/healthctl/healthctl/internal/classify"
	"github.com/healthctl/healthctl/internal/probe/httpprobe"
	"github.com/healthctl/healthctl/internal/redact"
	"github.com/healthctl/healthctl/internal/scheme"
)

// TestEveryKindRowAnswers: a row whose exchange is not HTTP's names its
// kind, and its exchange always hands the classifier an Answer of that
// kind — read or not, with or without an error — so no kind's answer is
// ever judged by HTTP's status rules, and the report and drain-test read
// every kind the one way. An HTTP row names no kind.
func TestEveryKindRowAnswers(t *testing.T) {
	for _, row := range scheme.Schemes() {
		t.Run(row.Name, func(t *testing.T) {
			// A path: a row whose URL must name one (dns://) opens too.
			u, err := url.Parse(row.URL("127.0.0.1:1/x"))
			if err != nil {
				t.Fatal(err)
			}
			o := &scheme.Options{URL: u, Method: "GET", Header: http.Header{}, Network: "tcp", Resolve: map[string][]string{},
				ConnectTimeout: time.Second, ReadTimeout: time.Second, MaxTime: time.Second, Redactor: redact.NewRedactor(nil, nil)}
			p := newRun(o, hooks{})
			ex, err := rowExchange(row)(context.Background(), p.Probe)
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			// HTTP's exchange (either of its two) is httpprobe.New's.
			isHTTP := reflect.ValueOf(rowExchange(row)).Pointer() == reflect.ValueOf(httpprobe.New).Pointer()
			if isHTTP != (row.Kind == nil) {
				t.Fatalf("HTTP exchange %v, kind %v: a row that is not HTTP names its kind, HTTP's none", isHTTP, row.Kind)
			}
			if row.Kind == nil {
				return
			}
			for _, end := range []error{nil, io.ErrUnexpectedEOF, errors.New("a window closed")} {
				var res Result
				obs := classify.Observation{Kind: row.Kind, StatusCode: 200, StatusExpected: true}
				var f classify.Facts
				ex.Describe(end, time.Now(), &res, &obs, &f)
				if obs.Answer == nil {
					t.Fatalf("ended by %v: no Answer", end)
				}
				if obs.Answer.Kind() != row.Kind {
					t.Errorf("ended by %v: an answer of kind %q, the row's is %q", end, obs.Answer.Kind().Name, row.Kind.Name)
				}
				if _, r := classify.Classify(obs); end == nil && r.Outcome() == classify.Pass && row.Kind.NotProtocol != "" {
					t.Errorf("nothing read, and %s passes (HTTP's 200?)", r)
				}
			}
		})
	}
}

// TestEveryRowHasAnExchange: the table (internal/scheme) is data only;
// each of its rows meets its exchange in exchanges by its kind, and
// nothing there is for a kind no row names. A row added without its exchange
// fails here, not in a user's probe.
func TestEveryRowHasAnExchange(t *testing.T) {
	kinds := map[*classify.Kind]bool{}
	for _, row := range scheme.Schemes() {
		kinds[row.Kind] = true
		if rowExchange(row) == nil {
			t.Errorf("row %s: no exchange for its kind in exchanges", row.Name)
		}
		for _, a := range append([]string{row.Name}, row.Aliases...) {
			if exchangeFor(a) == nil {
				t.Errorf("scheme %s (row %s): exchangeFor finds none", a, row.Name)
			}
		}
	}
	for k := range exchanges {
		if !kinds[k] {
			t.Errorf("exchanges has an exchange for kind %s, which no row of the table names", k.Name)
		}
	}
}
