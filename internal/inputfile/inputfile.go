// Package inputfile reads the files healthctl takes as input — the targets
// file, the config file, -H @file, -d @file, the CA bundle, the client
// certificate and key, the state file — so that none can hang or exhaust
// it: each must be a regular file, is opened without blocking (a FIFO
// would block open() until a writer came, deaf to SIGTERM), and is read up
// to a documented cap for its kind (/dev/zero never ends). Standard input
// is read only where a command says `-`, never through a path.
package inputfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Kind is a kind of input file and its size cap.
type Kind struct {
	// Name says what the file is, in errors: "targets file".
	Name string
	// Max is the most bytes it may hold; 0: no cap (a file streamed,
	// never read whole).
	Max int64
}

// The caps, one per kind (documented in docs/configuration.md): each is
// far above what a real file holds and far below what would strain a run.
var (
	// Targets: 10,000 targets are about 2 MiB.
	Targets = Kind{"targets file", 32 << 20}
	// Config: a config file is a few hundred bytes.
	Config = Kind{"config file", 1 << 20}
	// Headers: -H @file, a handful of header lines.
	Headers = Kind{"header file", 1 << 20}
	// Data: -d @-, a request body read from standard input (once, into
	// memory: a retry or a redirect sends it again).
	Data = Kind{"data file", 64 << 20}
	// Body: -d @file, a request body streamed from the file for each
	// request (Open): its size costs no memory, and it has no cap.
	Body = Kind{"data file", 0}
	// CABundle: --cacert; the Mozilla bundle is about 220 KiB.
	CABundle = Kind{"CA bundle", 16 << 20}
	// ClientCert: --cert and --key, PEM.
	ClientCert = Kind{"certificate or key file", 1 << 20}
	// Manifest: drain-test --manifest, a Kubernetes or Compose file.
	Manifest = Kind{"manifest", 16 << 20}
	// State: --state; 100,000 targets are about 15 MB. The cap is past the
	// state of the largest fleet a targets file within its own cap can
	// hold (~1.2 million entries of ~27 bytes, ~190 MB of state): the
	// file a run wrote is always read by the next.
	State = Kind{"state file", 256 << 20}
)

// Error is an input file that cannot be read as one: not a regular file,
// or larger than its kind's cap.
type Error struct {
	Path string
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Cause is a Read error without its path, for an error that names the
// file once itself: "no such file or directory", "not a regular file (a
// FIFO)", not "f.yaml: open f.yaml: no such file or directory".
func Cause(err error) error {
	var ie *Error
	var pe *fs.PathError
	switch {
	case errors.As(err, &ie):
		return ie.Err
	case errors.As(err, &pe):
		return pe.Err
	}
	return err
}

// ErrTooLarge is wrapped by the Error of a file past its cap.
var ErrTooLarge = errors.New("too large")

// ErrNotRegular is wrapped by the Error of a FIFO, device, socket or
// directory.
var ErrNotRegular = errors.New("not a regular file")

// Read reads the file at path, of kind k: a regular file of at most k.Max
// bytes. A FIFO, device, socket or directory is refused at once (nothing
// blocks), a larger file before anything past the cap is read; os.DevNull
// reads as empty. Errors from
// the file system are returned as os.ReadFile's (*fs.PathError), so a
// missing file is still fs.ErrNotExist.
func Read(path string, k Kind) ([]byte, error) {
	if path == os.DevNull {
		// The usual way to say "none" (--config /dev/null): empty, as a
		// read of it would be.
		return []byte{}, nil
	}
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &Error{Path: path, Kind: k, Err: fmt.Errorf("%w: it is %s; a %s must be a regular file (of at most %s)",
			ErrNotRegular, what(fi.Mode()), k.Name, Size(k.Max))}
	}
	if fi.Size() > k.Max {
		return nil, tooLarge(path, k)
	}
	// The size can change under us (a file being appended to): read at
	// most one byte past the cap to know.
	b, err := io.ReadAll(io.LimitReader(f, k.Max+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > k.Max {
		return nil, tooLarge(path, k)
	}
	return b, nil
}

// Open opens the file at path, of kind k, to be streamed: a regular file
// (a FIFO, device, socket or directory is refused at once, nothing
// blocks) within k's cap if it has one, with what Stat says of it. Errors
// are Read's.
func Open(path string, k Kind) (*os.File, fs.FileInfo, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &Error{Path: path, Kind: k, Err: fmt.Errorf("%w: it is %s; a %s must be a regular file",
			ErrNotRegular, what(fi.Mode()), k.Name)}
	}
	if k.Max > 0 && fi.Size() > k.Max {
		f.Close()
		return nil, nil, tooLarge(path, k)
	}
	return f, fi, nil
}

func tooLarge(path string, k Kind) error {
	return &Error{Path: path, Kind: k, Err: fmt.Errorf("%w: larger than the %s cap of a %s", ErrTooLarge, Size(k.Max), k.Name)}
}

// What names a file type that is not a regular file ("a FIFO (named
// pipe)", "a character device"), for a file healthctl would write.
func What(m fs.FileMode) string { return what(m) }

// what names a file type that is not a regular file.
func what(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// Size shows a cap: 32 MiB, 512 KiB, 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
