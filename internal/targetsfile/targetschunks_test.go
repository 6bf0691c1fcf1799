package targetsfile

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// parseBoth reads data whole and a slice of `items` entries at a time and
// fails the test unless the sliced read, when it takes the file, gives the
// whole read's entries (it never takes a file with an error: the whole
// read says it). It returns whether the sliced read took the file.
func parseBoth(t *testing.T, data []byte, items int) bool {
	t.Helper()
	want, err := parseWhole("t.yaml", data)
	got, took := parseSliced("t.yaml", data, 0, items)
	if took && (err != nil || !reflect.DeepEqual(got, want)) {
		t.Fatalf("%q, %d a slice:\nsliced %+v\nwhole  %v %+v", data, items, got, err, want)
	}
	return took
}

// TestSlicedReadIsTheWholeRead: a big targets file read a slice of its
// list at a time gives what the whole document gives, entries, lines and
// errors alike, in the shapes people write (and takes them: comments,
// flow mappings, quoted URLs with queries, headers, defaults before or
// after the list, the list at the left edge); a file the cut cannot vouch
// for is read whole.
func TestSlicedReadIsTheWholeRead(t *testing.T) {
	var users strings.Builder
	users.WriteString("# the fleet\ndefaults:\n  max_time: 5s\n  headers: [\"X-A: 1\"]\ntargets:   # all of it\n\n")
	for i := range 23 {
		u := fmt.Sprintf("http://127.0.0.1:%d/health?full=1&env=%d", 1000+i, i)
		switch i % 5 {
		case 0:
			fmt.Fprintf(&users, "  - name: env-%d\n    url: %s\n", i, u)
		case 1:
			fmt.Fprintf(&users, "  - {name: env-%d, url: %q}\n", i, u)
		case 2:
			fmt.Fprintf(&users, "# team %d\n  - name: \"env-%d\"\n    url: '%s'   # behind the LB\n    headers: [\"X-Probe: 1\"]\n\n", i%7, i, u)
		case 3:
			fmt.Fprintf(&users, "  - name: env-%d\n    url: \"%s\"\n    headers:\n      - \"Host: env-%d.invalid\"\n      - \"Authorization: Bearer tok-%d\"\n    expect_status: 2xx\n", i, u, i, i)
		case 4:
			fmt.Fprintf(&users, "  -\n    name: env-%d\n    url: %s\n    data: |\n      - not an entry\n      # nor a comment\n    recover: false\n  - {name: flow-%d,\n     url: %q}\n", i, u, i, u)
		}
	}
	head, list, _ := strings.Cut(users.String(), "targets:   # all of it\n")
	left := head + "targets:\n" + strings.ReplaceAll("\n"+list, "\n  ", "\n")[1:]
	after := "targets:\n" + list + "defaults:\n  max_time: 3s\n"
	for _, src := range []string{users.String(), left, after} {
		for _, items := range []int{1, 2, 3, 7, 1000} {
			if !parseBoth(t, []byte(src), items) {
				t.Fatalf("not read in slices:\n%s", src)
			}
		}
	}
	// Errors anywhere are the whole read's, the first in the file first.
	bad := []string{
		strings.Replace(users.String(), "name: env-15\n", "name: env-3\n", 1),
		strings.Replace(users.String(), "url: http://127.0.0.1:1010/", "urll: http://127.0.0.1:1010/", 1),
		strings.Replace(users.String(), "env-16, url", "env-16, url: [, url", 1),
		strings.Replace(users.String(), "max_time: 5s", "max_time: 5s\n  bogus: 1", 1),
		users.String() + "targets:\n  - name: again\n",
		users.String() + "---\ntargets: []\n",
		users.String() + "unknown: 1\n",
	}
	for _, src := range bad {
		if parseBoth(t, []byte(src), 2) {
			t.Errorf("read in slices, though the whole read fails: %q", src)
		}
	}
	// Read whole: anchors and aliases, tags, a flow list, CR line ends, tabs.
	for _, src := range []string{
		"targets:\n  - &x {name: a, url: 'http://h/'}\n  - <<: *x\n    name: b\n",
		"targets:\n  - name: !!str a\n",
		"targets: [{name: a}, {name: b}]\n",
		"targets:\r  - name: a\r  - name: b\r",
		"targets:\n\t- name: a\n",
		"targets:\n  - name: a\n    headers: [\"Accept: */*\"]\n",
	} {
		if parseBoth(t, []byte(src), 1) {
			t.Errorf("read in slices: %q", src)
		}
	}
}
