package amqpwire

import (
	"strings"
)

// EncodeStart is Connection.Start's arguments (a test server's).
func EncodeStart(s Start) []byte {
	var e encoder
	e.b = append(e.b, s.Major, s.Minor)
	e.table(s.Properties)
	e.longstr(s.Mechanisms)
	e.longstr(s.Locales)
	return e.b
}

// EncodeTune is Connection.Tune's arguments (a test server's).
func EncodeTune(t Tune) []byte {
	var e encoder
	e.short(t.ChannelMax)
	e.long(t.FrameMax)
	e.short(t.Heartbeat)
	return e.b
}

// EncodeClose is Connection.Close's arguments (a test server's).
func EncodeClose(c Close) []byte {
	var e encoder
	e.short(c.Code)
	e.shortstr(c.Text)
	e.short(c.Class)
	e.short(c.Method)
	return e.b
}

// ParseStartOk reads Connection.Start-Ok's arguments: the mechanism and
// PLAIN's user and password (a test server's).
func ParseStartOk(args []byte) (props Table, mechanism, user, password string, err error) {
	d := decoder{b: args}
	props = d.table(0)
	mechanism = d.shortstr()
	resp := d.longstr()
	d.shortstr()
	if err := d.done("Connection.Start-Ok"); err != nil {
		return nil, "", "", "", err
	}
	parts := strings.SplitN(resp, "\x00", 3)
	if len(parts) == 3 {
		user, password = parts[1], parts[2]
	}
	return props, mechanism, user, password, nil
}

// ParseOpen reads Connection.Open's virtual host (a test server's).
func ParseOpen(args []byte) (string, error) {
	d := decoder{b: args}
	v := d.shortstr()
	return v, d.done("Connection.Open")
}
