package amqpwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Fields.

// Table is a field table, decoded: strings, numbers, booleans, tables,
// arrays ([]any), nil for void.
type Table map[string]any

// String is the string value of key, "" when it is none.
func (t Table) String(key string) string {
	s, _ := t[key].(string)
	return s
}

// maxDepth bounds the nesting of tables and arrays read.
const maxDepth = 8

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		if d.err == nil {
			d.err = errors.New("truncated")
		}
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) octet() byte {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) short() uint16 {
	if b := d.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) long() uint32 {
	if b := d.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) longlong() uint64 {
	if b := d.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (d *decoder) shortstr() string { return string(d.take(int(d.octet()))) }

func (d *decoder) longstr() string {
	n := d.long()
	if n > uint32(len(d.b)) {
		d.take(len(d.b) + 1)
		return ""
	}
	return string(d.take(int(n)))
}

func (d *decoder) table(depth int) Table {
	n := d.long()
	if d.err != nil || n > uint32(len(d.b)) || depth > maxDepth {
		d.take(len(d.b) + 1)
		return nil
	}
	sub := decoder{b: d.take(int(n))}
	t := Table{}
	for len(sub.b) > 0 && sub.err == nil {
		k := sub.shortstr()
		t[k] = sub.value(depth)
	}
	if sub.err != nil {
		d.err = sub.err
	}
	return t
}

func (d *decoder) array(depth int) []any {
	n := d.long()
	if d.err != nil || n > uint32(len(d.b)) || depth > maxDepth {
		d.take(len(d.b) + 1)
		return nil
	}
	sub := decoder{b: d.take(int(n))}
	var a []any
	for len(sub.b) > 0 && sub.err == nil {
		a = append(a, sub.value(depth))
	}
	if sub.err != nil {
		d.err = sub.err
	}
	return a
}

// value is one field value, by its type octet (RabbitMQ's types, which
// its clients use: the spec's errata).
func (d *decoder) value(depth int) any {
	switch t := d.octet(); t {
	case 't':
		return d.octet() != 0
	case 'b':
		return int64(int8(d.octet()))
	case 'B':
		return int64(d.octet())
	case 's':
		return int64(int16(d.short()))
	case 'u':
		return int64(d.short())
	case 'I':
		return int64(int32(d.long()))
	case 'i':
		return int64(d.long())
	case 'l':
		return int64(d.longlong())
	case 'f':
		return float64(math.Float32frombits(d.long()))
	case 'd':
		return math.Float64frombits(d.longlong())
	case 'D':
		scale := d.octet()
		v := int32(d.long())
		return float64(v) / math.Pow10(int(scale))
	case 'S', 'x':
		return d.longstr()
	case 'A':
		return d.array(depth + 1)
	case 'T':
		return int64(d.longlong())
	case 'F':
		return d.table(depth + 1)
	case 'V':
		return nil
	default:
		if d.err == nil {
			d.err = fmt.Errorf("unknown field type %q", t)
		}
		return nil
	}
}

func (d *decoder) done(what string) error {
	if d.err != nil {
		return &NotAMQPError{Seen: fmt.Sprintf("a %s whose arguments do not parse (%v)", what, d.err)}
	}
	return nil
}

type encoder struct{ b []byte }

func (e *encoder) short(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) long(v uint32)  { e.b = binary.BigEndian.AppendUint32(e.b, v) }

func (e *encoder) shortstr(s string) {
	if len(s) > 255 {
		s = s[:255]
	}
	e.b = append(append(e.b, byte(len(s))), s...)
}

func (e *encoder) longstr(s string) {
	e.long(uint32(len(s)))
	e.b = append(e.b, s...)
}

// table writes t with its keys sorted (the bytes are the same each time).
func (e *encoder) table(t Table) {
	var body encoder
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		body.shortstr(k)
		switch v := t[k].(type) {
		case string:
			body.b = append(body.b, 'S')
			body.longstr(v)
		case bool:
			b := byte(0)
			if v {
				b = 1
			}
			body.b = append(body.b, 't', b)
		case int64:
			body.b = append(body.b, 'l')
			body.b = binary.BigEndian.AppendUint64(body.b, uint64(v))
		case Table:
			body.b = append(body.b, 'F')
			body.table(v)
		default:
			body.b = append(body.b, 'V')
		}
	}
	e.long(uint32(len(body.b)))
	e.b = append(e.b, body.b...)
}
