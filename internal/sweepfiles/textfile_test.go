package sweepfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTextfileHint: a --prom-file whose directory does not exist is told
// where node_exporter reads on this system: the directory its arguments
// name, else Debian's or the RPM packages' directory when it exists;
// nothing when it cannot tell or the directory exists.
func TestTextfileHint(t *testing.T) {
	mk := func(t *testing.T, root string, dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	missing := filepath.Join(t.TempDir(), "node_exporter", "textfile", "healthctl.prom")
	for _, c := range []struct {
		name  string
		dirs  []string
		files map[string]string
		want  string
	}{
		{"nothing to tell", nil, nil, ""},
		{"debian", []string{"/var/lib/prometheus/node-exporter"}, nil,
			"; node_exporter's textfile directory on this system is /var/lib/prometheus/node-exporter: --prom-file /var/lib/prometheus/node-exporter/healthctl.prom"},
		{"rpm", []string{"/var/lib/node_exporter/textfile_collector"}, nil,
			"; node_exporter's textfile directory on this system is /var/lib/node_exporter/textfile_collector: --prom-file /var/lib/node_exporter/textfile_collector/healthctl.prom"},
		{"debian's arguments", []string{"/var/lib/prometheus/node-exporter"},
			map[string]string{"/etc/default/prometheus-node-exporter": "# ARGS=\"--collector.textfile.directory=/nope\"\nARGS=\"--collector.textfile.directory=/srv/textfile --no-collector.zfs\"\n"},
			"; node_exporter's textfile directory on this system is /srv/textfile (/etc/default/prometheus-node-exporter): --prom-file /srv/textfile/healthctl.prom"},
		{"upstream's sysconfig", nil,
			map[string]string{"/etc/sysconfig/node_exporter": "OPTIONS=\"-collector.textfile.directory /var/lib/node_exporter/textfile_collector\"\n"},
			"; node_exporter's textfile directory on this system is /var/lib/node_exporter/textfile_collector (/etc/sysconfig/node_exporter): --prom-file /var/lib/node_exporter/textfile_collector/healthctl.prom"},
	} {
		root := t.TempDir()
		mk(t, root, c.dirs...)
		for name, text := range c.files {
			mk(t, root, filepath.Dir(name))
			if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := TextfileHint(root, missing); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	// The directory exists: the error is another (a permission), no hint.
	root := t.TempDir()
	mk(t, root, "/var/lib/prometheus/node-exporter")
	if got := TextfileHint(root, filepath.Join(t.TempDir(), "healthctl.prom")); got != "" {
		t.Errorf("existing directory: %q", got)
	}
}
