package amqpwire

import (
	"bufio"
	"errors"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/healthctl/healthctl/internal/classify"
)

func reader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }

func TestReadFrame(t *testing.T) {
	start := Start{Major: 0, Minor: 9, Mechanisms: "PLAIN", Locales: "en_US",
		Properties: Table{"product": "RabbitMQ", "version": "3.10.8", "capabilities": Table{"basic.nack": true}}}
	for _, tc := range []struct {
		name, in string
		speaks   string
		seen     string
		err      error
		method   string
	}{
		{name: "start", in: string(MethodFrame(MethodStart, EncodeStart(start))), method: "Connection.Start"},
		{name: "heartbeat", in: "\x08\x00\x00\x00\x00\x00\x00\xce", method: ""},
		{name: "0-9-1 header back", in: "AMQP\x00\x00\x09\x01", speaks: "AMQP 0-9-1"},
		{name: "1.0 header", in: "AMQP\x00\x01\x00\x00", speaks: "AMQP 1-0-0"},
		{name: "1.0 SASL header", in: "AMQP\x03\x01\x00\x00", speaks: "AMQP 1-0-0 (protocol id 3)"},
		{name: "http", in: "HTTP/1.1 400 Bad Request\r\n\r\n", seen: "HTTP/1.1 400 Bad Request"},
		{name: "ssh", in: "SSH-2.0-OpenSSH_9.6\r\n", seen: "SSH-2.0-OpenSSH_9.6"},
		{name: "A but not AMQP", in: "ABCDEFGHIJ", seen: "ABCDEFGHIJ"},
		{name: "bad end", in: "\x01\x00\x00\x00\x00\x00\x01\x00\x00", seen: "whose end is 0x0"},
		{name: "too large", in: "\x01\x00\x00\x7f\xff\xff\xff", seen: "\x01"},
		{name: "eof", in: "", err: io.EOF},
		{name: "short", in: "\x01\x00\x00\x00\x00\x00\x10\x00", err: ErrShort},
		{name: "short head", in: "\x01\x00", err: ErrShort},
	} {
		f, err := ReadFrame(reader(tc.in))
		var ph *ProtocolHeaderError
		var na *NotAMQPError
		switch {
		case tc.speaks != "":
			if !errors.As(err, &ph) || ph.Speaks() != tc.speaks {
				t.Errorf("%s: %v, want it speaks %s", tc.name, err, tc.speaks)
			}
		case tc.seen != "":
			if !errors.As(err, &na) || !strings.Contains(na.Seen, tc.seen) {
				t.Errorf("%s: %v, want seen %q", tc.name, err, tc.seen)
			}
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.method != "":
			m, err := ParseMethod(f)
			if err != nil || m.Name() != tc.method {
				t.Errorf("%s: %v %v, want %s", tc.name, m.Name(), err, tc.method)
			}
			got, err := ParseStart(m.Args)
			if err != nil || !reflect.DeepEqual(got, start) {
				t.Errorf("%s: %+v %v, want %+v", tc.name, got, err, start)
			}
		}
	}
}

// TestClientFrames: the bytes a client sends, read back as a server does.
func TestClientFrames(t *testing.T) {
	read := func(b []byte) Method {
		t.Helper()
		f, err := ReadFrame(reader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMethod(f)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := read(StartOk("healthctl/1", "app", "p\x00w"))
	props, mech, user, pw, err := ParseStartOk(m.Args)
	caps, _ := props["capabilities"].(Table)
	if !m.Is(MethodStartOk) || err != nil || mech != "PLAIN" || user != "app" || pw != "p\x00w" ||
		props.String("product") != "healthctl/1" || caps["authentication_failure_close"] != true {
		t.Errorf("Start-Ok: %v %q %q %q %v %v", m.Name(), mech, user, pw, props, err)
	}
	if v, err := ParseOpen(read(Open("orders/eu")).Args); v != "orders/eu" || err != nil {
		t.Errorf("Open: %q %v", v, err)
	}
	if c, err := ParseClose(read(CloseFrame(200, "Goodbye")).Args); c.Code != 200 || c.Text != "Goodbye" || err != nil {
		t.Errorf("Close: %+v %v", c, err)
	}
	if tn, err := ParseTune(read(TuneOk(Tune{ChannelMax: 2047, FrameMax: 131072, Heartbeat: 60})).Args); tn != (Tune{2047, 131072, 0}) || err != nil {
		t.Errorf("Tune-Ok: %+v %v (no heartbeats asked)", tn, err)
	}
	if m := read(CloseOk()); !m.Is(MethodCloseOk) || len(m.Args) != 0 {
		t.Errorf("Close-Ok: %v %q", m.Name(), m.Args)
	}
}

// TestServerTable reads every field type RabbitMQ's clients use.
func TestServerTable(t *testing.T) {
	body := "" +
		"\x01t" + "t\x01" +
		"\x01b" + "b\xff" +
		"\x01s" + "s\xff\xfe" +
		"\x01I" + "I\xff\xff\xff\xfe" +
		"\x01l" + "l\x00\x00\x00\x00\x00\x00\x00\x07" +
		"\x01d" + "d\x3f\xf0\x00\x00\x00\x00\x00\x00" +
		"\x01D" + "D\x02\x00\x00\x01\x2c" +
		"\x01S" + "S\x00\x00\x00\x02hi" +
		"\x01A" + "A\x00\x00\x00\x02t\x00" +
		"\x01T" + "T\x00\x00\x00\x00\x00\x00\x00\x09" +
		"\x01V" + "V" +
		"\x01F" + "F\x00\x00\x00\x00"
	d := decoder{b: []byte("\x00\x00\x00" + string(rune(len(body))) + body)}
	got := d.table(0)
	want := Table{"t": true, "b": int64(-1), "s": int64(-2), "I": int64(-2), "l": int64(7), "d": 1.0, "D": 3.0,
		"S": "hi", "A": []any{false}, "T": int64(9), "V": nil, "F": Table{}}
	if d.err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("table: %v %v, want %v", got, d.err, want)
	}
	for _, bad := range []string{"\x00\x00\x00\x03\x01kZ", "\x00\x00\x00\x09\x01kS\x00\x00\x00\x09", "\x00\x00\x01\x00"} {
		d := decoder{b: []byte(bad)}
		if d.table(0); d.err == nil {
			t.Errorf("table %q: no error", bad)
		}
	}
	// Nesting past maxDepth is refused, not followed.
	nested := "\x00\x00\x00\x00"
	for range maxDepth + 2 {
		inner := "\x01kF" + nested
		nested = string([]byte{0, 0, 0, byte(len(inner))}) + inner
	}
	if d := (decoder{b: []byte(nested)}); d.table(0) != nil && d.err == nil {
		t.Errorf("a table nested %d deep was read", maxDepth+2)
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		url, user, pw, vhost string
		login                bool
		bad                  string
	}{
		{url: "amqp://h", vhost: "/"},
		{url: "amqp://h/", vhost: "/"},
		{url: "amqp://h/%2F", vhost: "/"},
		{url: "amqp://h/prod", vhost: "prod"},
		{url: "amqp://h/a%2Fb", vhost: "a/b"},
		{url: "amqp://guest:guest@h", user: "guest", pw: "guest", login: true, vhost: "/"},
		{url: "amqp://guest@h", user: "guest", login: true, vhost: "/"},
		{url: "amqp://:pw@h", pw: "pw", login: true, vhost: "/"},
		{url: "amqp://h/a/b", bad: "more than a virtual host"},
		{url: "amqp://h/" + strings.Repeat("v", 256), bad: "longer than 255"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckPath(u); tc.bad != "" || err != nil {
			if err == nil || tc.bad == "" || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s: %v, want %q", tc.url, err, tc.bad)
			}
			continue
		}
		user, pw, login := Login(u)
		if user != tc.user || pw != tc.pw || login != tc.login || Vhost(u) != tc.vhost {
			t.Errorf("%s: %q %q %v %q, want %q %q %v %q", tc.url, user, pw, login, Vhost(u), tc.user, tc.pw, tc.login, tc.vhost)
		}
	}
}

func TestAnswerReason(t *testing.T) {
	open, startOk := MethodName(ClassConnection, MethodOpen), MethodName(ClassConnection, MethodStartOk)
	for _, tc := range []struct {
		a    Answer
		want classify.Reason
		said string
	}{
		{Answer{Read: true, LoggedIn: true}, classify.OK, "logged in"},
		{Answer{Read: true, Accepting: true}, classify.OK, "accepting connections"},
		{Answer{Read: true, Close: &CloseSaid{Code: 403, Name: "ACCESS_REFUSED", After: startOk}}, AuthRefused, "403 ACCESS_REFUSED"},
		{Answer{Read: true, Close: &CloseSaid{Code: 403, After: open}}, AuthRefused, "403 "},
		{Answer{Read: true, Close: &CloseSaid{Code: 530, After: open}}, VhostRefused, "530 "},
		{Answer{Read: true, Close: &CloseSaid{Code: 530, After: startOk}}, ServerError, "530 "},
		{Answer{Read: true, Close: &CloseSaid{Code: 541, After: open}}, ServerError, "541 "},
		{Answer{Read: true, Close: &CloseSaid{Code: 320, After: open}}, ServerError, "320 "},
		{Answer{Read: true, ClosedAfter: startOk}, AuthRefused, ""},
		{Answer{Read: true, ClosedAfter: open}, ServerError, ""},
		{Answer{Read: true, NoPlain: true}, ServerError, ""},
		{Answer{Read: true, Speaks: "AMQP 1-0-0"}, Protocol, ""},
		{Answer{Read: true, Seen: "x"}, Protocol, ""},
		{Answer{Read: true}, Protocol, ""},
		{Answer{}, Protocol, ""},
	} {
		if r := tc.a.Reason(); r != tc.want || tc.a.Said() != tc.said {
			t.Errorf("%+v: %s %q, want %s %q", tc.a, r, tc.a.Said(), tc.want, tc.said)
		}
	}
}
