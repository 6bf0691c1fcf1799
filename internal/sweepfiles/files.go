// Package sweepfiles writes what each watch sweep leaves behind: the state
// file (--state) and the metrics (--prom-file, and --listen's /metrics
// through Publish), side by side; and, for an error about --prom-file,
// which directory node_exporter's textfile collector reads on this system
// (TextfileHint).
package sweepfiles

import (
	"io"
	"sync"
	"time"

	"github.com/healthctl/healthctl/internal/metrics"
	"github.com/healthctl/healthctl/internal/output"
	"github.com/healthctl/healthctl/internal/state"
)

// Files are a watch's files; a zero field is not written.
type Files struct {
	// Store is --state's (nil: none).
	Store *state.Store
	// PromFile is --prom-file's path, PromSource the setting that named
	// it, for its write errors ("--prom-file").
	PromFile, PromSource string
	// Publish hands each sweep's metrics to --listen's service (nil:
	// no --listen).
	Publish func(metrics.Input) error

	// saveMu serialises state saves: after a sweep, and before its hooks.
	saveMu sync.Mutex
}

// Written is how long a sweep's files took to write (encoding, fsync and
// rename; 0: not written).
type Written struct{ State, Metrics time.Duration }

// Save writes st to the state file.
func (r *Files) Save(st *state.File) error {
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	return r.Store.Save(st)
}

// Metrics reports whether the metrics are written (--prom-file or
// --listen).
func (r *Files) Metrics() bool { return r.PromFile != "" || r.Publish != nil }

// Write writes a sweep's state st and its metrics in, and says how long
// each took; the errors are a *output.WriteError each (the run exits 74),
// the state's first.
func (r *Files) Write(st *state.File, in metrics.Input) (Written, []error) {
	var took Written
	var errs []error
	// The state file and the metrics are written side by side (each only
	// reads st once Prepare has readied it): ~40 ms each at 10,000 targets.
	var stateErr error
	var saved sync.WaitGroup
	if r.Store != nil {
		r.saveMu.Lock()
		write := r.Store.Prepare(st)
		t0 := time.Now()
		saved.Go(func() {
			stateErr = write()
			took.State = max(time.Since(t0), time.Microsecond)
		})
	}
	var metricsErr error
	if r.Metrics() {
		metricsErr = r.writeMetrics(in, &took)
	}
	saved.Wait()
	if r.Store != nil {
		r.saveMu.Unlock()
	}
	// The state's error first, as when it was written first.
	if stateErr != nil {
		errs = append(errs, output.NewWriteError("", stateErr))
	}
	if metricsErr != nil {
		errs = append(errs, metricsErr)
	}
	return took, errs
}

// writeMetrics writes the sweep's metrics: for /metrics (--listen) and to
// --prom-file; the error is the first write's, ready for the exit (74).
func (r *Files) writeMetrics(in metrics.Input, took *Written) error {
	t0 := time.Now()
	var err error
	switch {
	case r.Publish != nil:
		// /metrics serves the last sweep's metrics (kept compressed);
		// --prom-file gets them written again, straight to the file.
		if werr := r.Publish(in); werr != nil {
			err = output.NewWriteError("metrics", werr)
		}
		if r.PromFile != "" && err == nil {
			werr := state.WriteOutputFunc(r.PromFile, 0o644, func(w io.Writer) error { return metrics.Write(w, in) })
			if werr != nil {
				err = output.NewWriteError(r.PromSource+" "+r.PromFile, werr)
			}
		}
	case r.PromFile != "":
		// Straight to the file: 10,000 targets' metrics are ~10 MB.
		werr := state.WriteOutputFunc(r.PromFile, 0o644, func(w io.Writer) error { return metrics.Write(w, in) })
		if werr != nil {
			err = output.NewWriteError(r.PromSource+" "+r.PromFile, werr)
		}
	}
	if r.PromFile != "" {
		took.Metrics = max(time.Since(t0), time.Microsecond)
	}
	return err
}
