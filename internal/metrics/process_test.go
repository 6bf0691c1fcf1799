package metrics

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestProcessFigures(t *testing.T) {
	before := ReadProcess()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	after := ReadProcess()
	f.Close()
	if runtime.GOOS == "linux" {
		if before.RSS <= 0 || before.FDs <= 0 {
			t.Fatalf("figures %+v: want RSS and fds", before)
		}
		if after.FDs != before.FDs+1 {
			t.Errorf("fds %d after opening one, %d before", after.FDs, before.FDs)
		}
	}
	if before.Goroutines < 1 {
		t.Errorf("goroutines %d", before.Goroutines)
	}
	var b strings.Builder
	if err := WriteProcess(&b, before); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, b.String())
	}
	want := []string{"go_goroutines"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_resident_memory_bytes", "process_open_fds")
	}
	for _, n := range want {
		if fams[n] == nil || fams[n].GetType().String() != "GAUGE" {
			t.Errorf("no gauge %s in\n%s", n, b.String())
		}
	}
}
