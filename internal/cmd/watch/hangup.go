package watchcmd

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/healthctl/healthctl/internal/crash"
)

// onHangup calls fn for every SIGHUP until the returned stop is called, as
// blackbox_exporter and Prometheus reload their configuration. (Windows
// never sends SIGHUP: there, nothing happens.)
func onHangup(fn func()) (stop func()) {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGHUP)
	crash.Go(func() {
		for {
			select {
			case <-ch:
				fn()
			case <-done:
				return
			}
		}
	})
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
