package output

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// linesBlock is how many lines one goroutine of JSONLines encodes at a time.
const linesBlock = 256

// JSONLines writes the values line(0) .. line(n-1) as JSONLine does, in that
// order, skipping those for which line reports false. With more than one
// block of lines and more than one P, the lines are encoded on every P, a
// block at a time, and written in order as their blocks complete: at most
// two blocks per P are held ahead of the writer, so memory does not grow
// with n. line must be safe to call from several goroutines. The first
// encoding error (a bug) or write error (a *WriteError) is returned; no line
// is written after it.
func JSONLines(w io.Writer, n int, line func(i int) (any, bool)) error {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 || n <= linesBlock {
		return encodeLines(w, 0, n, line)
	}
	blocks := (n + linesBlock - 1) / linesBlock
	type done struct {
		b   []byte
		err error
	}
	results := make([]chan done, blocks)
	for i := range results {
		results[i] = make(chan done, 1)
	}
	// A block is taken only with a token, and the writer returns a token
	// for each block it has written: the block the writer waits for is
	// always held by a worker that has its token.
	tokens := make(chan struct{}, 2*procs)
	for range cap(tokens) {
		tokens <- struct{}{}
	}
	// The blocks' buffers go round: the writer hands each one back once
	// written, so a sweep of 10,000 lines grows 2 buffers per P, not 40.
	free := make(chan []byte, 2*procs)
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range min(procs, blocks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				_, ok := <-tokens
				if !ok {
					return
				}
				k := int(next.Add(1)) - 1
				if k >= blocks {
					return
				}
				if stop.Load() {
					results[k] <- done{}
					continue
				}
				var b []byte
				select {
				case b = <-free:
				default:
				}
				buf := bytes.NewBuffer(b)
				lo := k * linesBlock
				err := encodeLines(buf, lo, min(lo+linesBlock, n), line)
				results[k] <- done{buf.Bytes(), err}
			}
		}()
	}
	var first error
	for k := range blocks {
		d := <-results[k]
		if first == nil {
			first = d.err
			if first == nil {
				if _, err := w.Write(d.b); err != nil {
					first = NewWriteError("stdout", err)
				}
				select {
				case free <- d.b[:0]:
				default:
				}
			}
			if first != nil {
				stop.Store(true)
			}
		}
		tokens <- struct{}{}
	}
	close(tokens)
	wg.Wait()
	return first
}

// encodeLines writes the lines lo .. hi-1 of JSONLines to w, by
// encoding/json (a LineValuer's LineValue()).
func encodeLines(w io.Writer, lo, hi int, line func(i int) (any, bool)) error {
	for i := lo; i < hi; i++ {
		v, ok := line(i)
		if !ok {
			continue
		}
		if lv, is := v.(LineValuer); is {
			v = lv.LineValue()
		}
		if err := JSONLine(w, v); err != nil {
			return err
		}
	}
	return nil
}

// LineValuer is a line that makes its value only when it is written:
// JSONLines writes LineValue() as JSONLine does, not the LineValuer
// itself (a sweep's lines are made one block at a time, not all at once).
type LineValuer interface {
	LineValue() any
}
