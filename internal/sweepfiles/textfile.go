package sweepfiles

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// textfileDirs are the directories node_exporter's textfile collector
// reads as the distributions package it, in the order they are tried:
// Debian's and Ubuntu's prometheus-node-exporter (its built-in default),
// and upstream's systemd example, which RPM packages follow.
var textfileDirs = []string{"/var/lib/prometheus/node-exporter", "/var/lib/node_exporter/textfile_collector"}

// textfileConfigs are the files where the packages' node_exporter takes
// its arguments (ARGS= on Debian, OPTIONS= in upstream's sysconfig).
var textfileConfigs = []string{"/etc/default/prometheus-node-exporter", "/etc/sysconfig/node_exporter", "/etc/sysconfig/prometheus-node_exporter"}

// textfileFlag is node_exporter's --collector.textfile.directory in its
// arguments; compiled on first use (package initialisation is paid by
// every start, probe included).
var textfileFlag = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`-?-collector\.textfile\.directory[= ]+["']?([^"' ]+)`)
})

// TextfileHint is what to add to the error about a --prom-file whose
// directory does not exist: which directory node_exporter reads on this
// system, when it can tell — the directory its arguments name, else one
// of textfileDirs that exists — or "" when it cannot (root is "/" but for
// tests).
func TextfileHint(root, promFile string) string {
	dir := filepath.Dir(promFile)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	found, from := "", ""
	for _, c := range textfileConfigs {
		if d := textfileDirIn(filepath.Join(root, c)); d != "" {
			found, from = d, c
			break
		}
	}
	if found == "" {
		for _, d := range textfileDirs {
			if fi, err := os.Stat(filepath.Join(root, d)); err == nil && fi.IsDir() {
				found = d
				break
			}
		}
	}
	if found == "" || filepath.Clean(found) == filepath.Clean(dir) {
		return ""
	}
	where := "node_exporter's textfile directory on this system is " + found
	if from != "" {
		where += " (" + from + ")"
	}
	return "; " + where + ": --prom-file " + filepath.Join(found, filepath.Base(promFile))
}

// textfileDirIn is the textfile directory an arguments file names, or "".
func textfileDirIn(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if m := textfileFlag().FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	return ""
}
