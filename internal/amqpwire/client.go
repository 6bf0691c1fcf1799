package amqpwire

import (
	"encoding/binary"
)

// The frames a client sends.

// StartOk is Connection.Start-Ok with PLAIN credentials (RFC 4616:
// "\x00user\x00password") and the client properties: product, and the
// capabilities RabbitMQ reads — authentication_failure_close makes it
// answer refused credentials with Close 403 instead of closing the socket.
func StartOk(product, user, password string) []byte {
	if product == "" {
		product = "healthctl"
	}
	props := Table{
		"product": product,
		"capabilities": Table{
			"authentication_failure_close": true,
			"connection.blocked":           true,
		},
	}
	var e encoder
	e.table(props)
	e.shortstr("PLAIN")
	e.longstr("\x00" + user + "\x00" + password)
	e.shortstr("en_US")
	return methodFrame(MethodStartOk, e.b)
}

// TuneOk is Connection.Tune-Ok: the server's channel-max and frame-max,
// no heartbeats (the connection lives for one Open).
func TuneOk(t Tune) []byte {
	var e encoder
	e.short(t.ChannelMax)
	e.long(t.FrameMax)
	e.short(0)
	return methodFrame(MethodTuneOk, e.b)
}

// Open is Connection.Open for vhost.
func Open(vhost string) []byte {
	var e encoder
	e.shortstr(vhost)
	e.shortstr("") // reserved-1 (capabilities)
	e.b = append(e.b, 0)
	return methodFrame(MethodOpen, e.b)
}

// CloseFrame is Connection.Close with code and text (200 and "Goodbye":
// the client is done).
func CloseFrame(code uint16, text string) []byte {
	var e encoder
	e.short(code)
	e.shortstr(text)
	e.short(0)
	e.short(0)
	return methodFrame(MethodClose, e.b)
}

// CloseOk is Connection.Close-Ok, the answer to the server's Close.
func CloseOk() []byte { return methodFrame(MethodCloseOk, nil) }

// MethodFrame is a method frame of the connection class on channel 0 (a
// test server's too).
func MethodFrame(id uint16, args []byte) []byte { return methodFrame(id, args) }

func methodFrame(id uint16, args []byte) []byte {
	b := make([]byte, 0, 7+4+len(args)+1)
	b = append(b, FrameMethod, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(args)))
	b = binary.BigEndian.AppendUint16(b, ClassConnection)
	b = binary.BigEndian.AppendUint16(b, id)
	b = append(b, args...)
	return append(b, frameEnd)
}
