// Command pageshots screenshots watch --listen's status page over
// synthetic fleets of 10, 500 and 10,000 targets, at desktop (1280x800)
// and phone (390x844) widths, in a headless Chromium, into a directory
// (docs/img by default):
//
//	go run ./scripts/pageshots [-out docs/img]
//
// The page is served on 127.0.0.1 by the listener itself; Chromium gets a
// fresh profile, a dead loopback proxy and a resolver that answers nothing
// but loopback, and each run is bounded by 60s.
package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/healthctl/healthctl/internal/listen"
	"github.com/healthctl/healthctl/internal/listen/listentest"
)

func main() {
	out := flag.String("out", "docs/img", "directory for the PNGs")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "pageshots:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	t0 := time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)
	for _, n := range []int{10, 500, 10000} {
		now := t0.Add(5*time.Minute + 20*time.Second)
		svc := listen.New(listen.Config{Interval: time.Minute, Now: func() time.Time { return now }, Refresh: 3600})
		for sweep := int64(1); sweep <= 5; sweep++ {
			if err := svc.Publish(listentest.Fleet(n, sweep, t0.Add(time.Duration(sweep)*time.Minute))); err != nil {
				return err
			}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		for _, size := range []struct{ name, wh string }{{"desktop", "1280,800"}, {"phone", "390,844"}} {
			shot, err := filepath.Abs(filepath.Join(out, fmt.Sprintf("watch-page-%d-%s.png", n, size.name)))
			if err != nil {
				return err
			}
			if err := screenshot(bin, "http://"+ln.Addr().String()+"/", shot, size.wh); err != nil {
				srv.Close()
				return err
			}
			fmt.Println(shot)
		}
		srv.Close()
	}
	return nil
}

func screenshot(bin, url, shot, wh string) error {
	profile, err := os.MkdirTemp("", "pageshots-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--no-default-browser-check", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
		"--hide-scrollbars", "--window-size="+wh, "--user-data-dir="+profile, "--screenshot="+shot, url)
	cmd.Env = append(os.Environ(), "HOME="+profile)
	cmd.WaitDelay = 5 * time.Second
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium %s: %v\n%s", wh, err, b)
	}
	return shrink(shot)
}

// shrink rewrites the PNG at path with a palette of its 256 commonest
// colours (a page is flat colours and anti-aliased text): a third of the
// size, for docs/img.
func shrink(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		return err
	}
	freq := map[color.RGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			freq[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cols := make([]color.RGBA, 0, len(freq))
	for c := range freq {
		cols = append(cols, c)
	}
	sort.Slice(cols, func(i, j int) bool {
		if freq[cols[i]] != freq[cols[j]] {
			return freq[cols[i]] > freq[cols[j]]
		}
		ci, cj := cols[i], cols[j]
		return uint32(ci.R)<<16|uint32(ci.G)<<8|uint32(ci.B) < uint32(cj.R)<<16|uint32(cj.G)<<8|uint32(cj.B)
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range cols[:min(len(cols), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(b, pal)
	draw.Draw(out, b, img, b.Min, draw.Src)
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(w, out); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
