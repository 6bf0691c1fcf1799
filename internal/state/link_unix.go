//go:build unix

package state

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile locks the file at p (created if missing: opened in its trusted
// directory without following a link, refused unless regular), polling
// every 20 ms until ctx ends. The lock is flock(2), as gofrs/flock takes
// it; closing the result releases it.
func lockFile(ctx context.Context, p *place) (io.Closer, error) {
	f, err := p.openLock()
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, &os.PathError{Op: "flock", Path: p.path, Err: err}
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
