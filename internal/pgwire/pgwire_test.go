package pgwire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func msg(typ byte, body string) string {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(4+len(body)))
	return string(b) + body
}

func auth(code uint32) string {
	b := make([]byte, 4)
	binary.BigEndian.PutUint32(b, code)
	return msg('R', string(b))
}

func TestStartup(t *testing.T) {
	got := Startup("u", "d")
	want := "\x00\x00\x00\x36\x00\x03\x00\x00user\x00u\x00database\x00d\x00application_name\x00healthctl\x00\x00"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUserDB(t *testing.T) {
	for raw, want := range map[string]string{
		"postgres://h":              "postgres postgres",
		"postgres://h/":             "postgres postgres",
		"postgres://bob@h":          "bob bob",
		"postgres://bob:pw@h/app":   "bob app",
		"postgresql://:pw@h/app":    "postgres app",
		"postgres://h/my%20db?x=1":  "postgres my db",
		"postgres://al%40ice@h/db1": "al@ice db1",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if user, db := UserDB(u); user+" "+db != want {
			t.Errorf("%s: %s %s, want %s", raw, user, db, want)
		}
	}
}

func TestRead(t *testing.T) {
	errBody := "SFATAL\x00VFATAL\x00C57P03\x00Mthe database system is starting up\x00Fpostmaster.c\x00\x00"
	for _, tc := range []struct {
		name, in string
		auth     bool
		code     string
		message  string
		notPG    string
		noAnswer bool
	}{
		{name: "ok", in: auth(0), auth: true},
		{name: "md5", in: auth(5) + "\x01\x02\x03\x04", auth: true},
		{name: "sasl", in: msg('R', "\x00\x00\x00\x0aSCRAM-SHA-256\x00\x00"), auth: true},
		{name: "notice first", in: msg('N', "SNOTICE\x00Mhi\x00\x00") + auth(3), auth: true},
		{name: "negotiate", in: msg('v', "\x00\x00\x00\x00\x00\x00\x00\x00") + auth(10), auth: true},
		{name: "starting", in: msg('E', errBody), code: "57P03", message: "the database system is starting up"},
		{name: "severity only S", in: msg('E', "SFATAL\x00C53300\x00Msorry, too many clients already\x00\x00"), code: "53300", message: "sorry, too many clients already"},
		{name: "fields without end", in: msg('E', "C08P01\x00Mbad"), code: "08P01", message: "bad"},
		{name: "http", in: "HTTP/1.1 400 Bad Request\r\n\r\n", notPG: "HTTP/1.1 400 Bad Request"},
		{name: "redis", in: "-ERR unknown command\r\n", notPG: "-ERR unknown command"},
		{name: "short garbage", in: "hi", notPG: "hi"},
		{name: "huge length", in: "E\x7f\xff\xff\xffxx", notPG: "E\x7f\xff\xff\xffxx"},
		{name: "other type", in: msg('Z', "I"), notPG: "Z\x00\x00\x00\x05I"},
		{name: "short auth", in: msg('R', "\x00"), notPG: "an authentication message of 1 bytes"},
		{name: "empty", in: "", noAnswer: true},
		{name: "cut", in: auth(0)[:6], noAnswer: true},
		{name: "cut header", in: "R\x00", noAnswer: true},
	} {
		a, err := Read(bufio.NewReader(strings.NewReader(tc.in)))
		var np *NotPostgresError
		switch {
		case tc.notPG != "":
			if !errors.As(err, &np) || np.Seen != tc.notPG {
				t.Errorf("%s: %+v %v, want not PostgreSQL %q", tc.name, a, err, tc.notPG)
			}
		case tc.noAnswer:
			if !errors.Is(err, ErrNoAnswer) {
				t.Errorf("%s: %+v %v, want ErrNoAnswer", tc.name, a, err)
			}
		case tc.auth:
			if err != nil || !a.Auth {
				t.Errorf("%s: %+v %v, want auth", tc.name, a, err)
			}
		default:
			if err != nil || a.Error == nil || a.Error.Code != tc.code || a.Error.Message != tc.message {
				t.Errorf("%s: %+v %v, want %s %q", tc.name, a.Error, err, tc.code, tc.message)
			}
		}
	}
}

// FuzzRead holds Read to its contract on any bytes: no panic, an answer or
// an error, Seen within 64 bytes.
func FuzzRead(f *testing.F) {
	for _, s := range []string{auth(0), msg('E', "C57P03\x00Mx\x00\x00"), "HTTP/1.1 200 OK\r\n", "", "R", msg('N', "") + msg('v', "")} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := Read(bufio.NewReaderSize(strings.NewReader(string(b)), 16))
		var np *NotPostgresError
		if errors.As(err, &np) && len(np.Seen) > 64 {
			t.Fatalf("Seen is %d bytes", len(np.Seen))
		}
		if err == nil && !a.Auth && a.Error == nil {
			t.Fatal("no error and no answer")
		}
	})
}
