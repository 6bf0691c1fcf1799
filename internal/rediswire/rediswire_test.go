package rediswire

import (
	"bufio"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestRequest(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
		cmds string
	}{
		{"redis://h", "*1\r\n$4\r\nPING\r\n", "PING"},
		{"redis://h/", "*1\r\n$4\r\nPING\r\n", "PING"},
		{"redis://h/0", "*1\r\n$4\r\nPING\r\n", "PING"},
		{"redis://h/3", "*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n*1\r\n$4\r\nPING\r\n", "SELECT PING"},
		{"redis://:s3cret@h", "*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n*1\r\n$4\r\nPING\r\n", "AUTH PING"},
		{"redis://bob:pw@h/2", "*3\r\n$4\r\nAUTH\r\n$3\r\nbob\r\n$2\r\npw\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n2\r\n*1\r\n$4\r\nPING\r\n", "AUTH SELECT PING"},
		{"redis://onlypass@h", "*2\r\n$4\r\nAUTH\r\n$8\r\nonlypass\r\n*1\r\n$4\r\nPING\r\n", "AUTH PING"},
		{"redis://:p%20w%0D%0A@h", "*2\r\n$4\r\nAUTH\r\n$5\r\np w\r\n\r\n*1\r\n$4\r\nPING\r\n", "AUTH PING"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		b, cmds := Request(u)
		var names []string
		for _, c := range cmds {
			names = append(names, string(c))
		}
		// INFO server and CLUSTER INFO follow PING on every probe.
		tc.want += "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n*2\r\n$7\r\nCLUSTER\r\n$4\r\nINFO\r\n"
		tc.cmds += " INFO CLUSTER INFO"
		if string(b) != tc.want || strings.Join(names, " ") != tc.cmds {
			t.Errorf("%s: got %q %v, want %q %s", tc.url, b, names, tc.want, tc.cmds)
		}
	}
}

func TestCheckPath(t *testing.T) {
	for path, ok := range map[string]bool{"": true, "/": true, "/0": true, "/15": true, "/x": false, "/-1": false, "/+1": false, "/1/2": false} {
		u := &url.URL{Scheme: "redis", Host: "h", Path: path}
		if err := CheckPath(u); (err == nil) != ok {
			t.Errorf("path %q: err %v, want ok %v", path, err, ok)
		}
	}
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		in       string
		want     string // Reply.String()
		code     string
		notRESP  string // NotRESPError.Seen
		noReply  bool
		moreRead string // what a second Read returns
	}{
		{in: "+PONG\r\n", want: "+PONG"},
		{in: "+PONG\n", want: "+PONG"},
		{in: "-LOADING Redis is loading the dataset in memory\r\n", want: "-LOADING Redis is loading the dataset in memory", code: "LOADING"},
		{in: "-NOAUTH Authentication required.\r\n", want: "-NOAUTH Authentication required.", code: "NOAUTH"},
		{in: "-ERR\r\n", want: "-ERR", code: "ERR"},
		{in: "+OK\r\n+PONG\r\n", want: "+OK", moreRead: "+PONG"},
		{in: "$4\r\nPONG\r\n", want: "$4"},
		{in: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", notRESP: "HTTP/1.1 400 Bad Request"},
		{in: "SSH-2.0-OpenSSH_9.2\r\n", notRESP: "SSH-2.0-OpenSSH_9.2"},
		{in: "\x16\x03\x01\x00\x05hello", notRESP: "\x16\x03\x01\x00\x05hello"},
		{in: "+" + strings.Repeat("x", MaxLine+10) + "\r\n", notRESP: "+" + strings.Repeat("x", 63)},
		{in: "", noReply: true},
		{in: "+PON", noReply: true},
	} {
		r := bufio.NewReaderSize(strings.NewReader(tc.in), 64)
		rep, err := Read(r)
		var nr *NotRESPError
		switch {
		case tc.notRESP != "":
			if !errors.As(err, &nr) || nr.Seen != tc.notRESP {
				t.Errorf("%q: got %v %v, want not RESP %q", tc.in, rep, err, tc.notRESP)
			}
		case tc.noReply:
			if !errors.Is(err, ErrNoReply) {
				t.Errorf("%q: got %v %v, want ErrNoReply", tc.in, rep, err)
			}
		default:
			if err != nil || rep.String() != tc.want || rep.Code() != tc.code {
				t.Errorf("%q: got %q (code %q) %v, want %q (code %q)", tc.in, rep.String(), rep.Code(), err, tc.want, tc.code)
			}
			if tc.moreRead != "" {
				if rep, err := Read(r); err != nil || rep.String() != tc.moreRead {
					t.Errorf("%q: second read %q %v, want %q", tc.in, rep.String(), err, tc.moreRead)
				}
			}
		}
	}
}

// FuzzRead holds Read to its contract on any bytes: no panic, a reply or
// an error, a line within MaxLine, a NotRESPError's Seen within 64 bytes.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"+PONG\r\n", "-LOADING x\r\n", "HTTP/1.1 200 OK\r\n", "", "+", "\r\n", "-\n", "$-1\r\n", strings.Repeat("+", 5000)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReaderSize(strings.NewReader(string(b)), 16)
		for range 4 {
			rep, err := Read(r)
			if err != nil {
				var nr *NotRESPError
				if errors.As(err, &nr) && len(nr.Seen) > 64 {
					t.Fatalf("Seen is %d bytes", len(nr.Seen))
				}
				return
			}
			if !strings.ContainsRune(respTypes, rune(rep.Type)) || len(rep.Text) > MaxLine {
				t.Fatalf("reply %q of %d bytes", rep.Type, len(rep.Text))
			}
		}
	})
}

// TestReadBulk: INFO's and CLUSTER INFO's bulk replies read whole; an error
// line or a simple string as Read reads them; a bulk past MaxBulk, a bad
// length or a missing CRLF is not RESP; a cut bulk is ErrNoReply.
func TestReadBulk(t *testing.T) {
	for _, tc := range []struct {
		in      string
		typ     byte
		text    string
		notRESP bool
		noReply bool
	}{
		{in: "$30\r\n# Cluster\r\ncluster_enabled:1\r\n\r\n+PONG\r\n", typ: '$', text: "# Cluster\r\ncluster_enabled:1\r\n"},
		{in: "$0\r\n\r\n", typ: '$', text: ""},
		{in: "$-1\r\n", typ: '$', text: ""},
		{in: "-ERR This instance has cluster support disabled\r\n", typ: '-', text: "ERR This instance has cluster support disabled"},
		{in: "+OK\r\n", typ: '+', text: "OK"},
		{in: "$99999999\r\n", notRESP: true},
		{in: "$x\r\n", notRESP: true},
		{in: "$3\r\nabcde", notRESP: true},
		{in: "$10\r\nabc", noReply: true},
	} {
		rep, err := ReadBulk(bufio.NewReaderSize(strings.NewReader(tc.in), 16))
		var nr *NotRESPError
		switch {
		case tc.notRESP:
			if !errors.As(err, &nr) {
				t.Errorf("%q: got %v %v, want not RESP", tc.in, rep, err)
			}
		case tc.noReply:
			if !errors.Is(err, ErrNoReply) {
				t.Errorf("%q: got %v %v, want ErrNoReply", tc.in, rep, err)
			}
		case err != nil || rep.Type != tc.typ || rep.Text != tc.text:
			t.Errorf("%q: got %c %q %v, want %c %q", tc.in, rep.Type, rep.Text, err, tc.typ, tc.text)
		}
	}
}

func TestField(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_mode:sentinel\r\ntcp_port:26379\r\n"
	for key, want := range map[string]string{"redis_mode": "sentinel", "tcp_port": "26379", "redis": "", "missing": ""} {
		if got := Field(info, key); got != want {
			t.Errorf("%s: %q, want %q", key, got, want)
		}
	}
	if got := Field("cluster_state:fail\ncluster_slots_ok:0", "cluster_slots_ok"); got != "0" {
		t.Errorf("LF lines: %q", got)
	}
}
