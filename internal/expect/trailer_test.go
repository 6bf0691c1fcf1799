package expect

import (
	"net/http"
	"regexp"
	"testing"
)

// TestCheckTrailer: a header condition judges the header section, and a
// field absent from it on the trailer that came after the body, saying so.
func TestCheckTrailer(t *testing.T) {
	header := http.Header{"X-Both": {"header"}}
	trailer := http.Header{"X-Health": {"ok"}, "X-Both": {"trailer"}}
	re := regexp.MustCompile
	cases := []struct {
		name    string
		e       Expectations
		trailer http.Header
		want    string
	}{
		{"trailer holds", Expectations{HeaderRE: []HeaderExpect{{Name: "X-Health", RE: re(`^ok$`)}}}, trailer, ""},
		{"trailer fails", Expectations{HeaderRE: []HeaderExpect{{Name: "X-Health", RE: re(`^down$`)}}}, trailer,
			"header X-Health (sent as a trailer) does not match /^down$/"},
		{"no trailer read", Expectations{HeaderRE: []HeaderExpect{{Name: "X-Health", RE: re(`^ok$`)}}}, nil,
			"header X-Health is missing (want /^ok$/)"},
		{"header section wins", Expectations{HeaderRE: []HeaderExpect{{Name: "X-Both", RE: re(`^trailer$`)}}}, trailer,
			"header X-Both does not match /^trailer$/"},
		{"negative on the trailer", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Health", RE: re(`ok`)}}}, trailer,
			"header X-Health (sent as a trailer) matches /ok/, which it must not (X-Health: ok)"},
		{"negative on both, header first", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Both", RE: re(`.`)}}}, trailer,
			"header X-Both matches /./, which it must not (X-Both: header)"},
		{"negative on the trailer, no match", Expectations{HeaderNotRE: []HeaderExpect{{Name: "X-Health", RE: re(`down`)}}}, trailer, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.e.Check(header, Body{Trailer: c.trailer}, 1<<16); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
