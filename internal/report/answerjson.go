package report

import (
	"bytes"
	"encoding/json"
)

// resultFields is ResultJSON without its MarshalJSON.
type resultFields ResultJSON

// MarshalJSON writes the result's fields as encoding/json would, with the
// kind's answer as one more field under its kind's name ("grpc": {…})
// before the decision and the addresses: one field for every kind, the
// JSON users read unchanged. (A type that embeds ResultJSON has this
// method promoted: it writes its own fields with AppendFields.)
func (j ResultJSON) MarshalJSON() ([]byte, error) {
	head := j
	head.Decision, head.Addresses = nil, nil
	b, err := encodeJSON(nil, resultFields(head))
	if err != nil {
		return nil, err
	}
	if a := j.Answer; a != nil {
		if obj := a.JSON(); obj != nil {
			if b, err = appendField(b, a.Kind().Name, obj); err != nil {
				return nil, err
			}
		}
	}
	if j.Decision != nil {
		if b, err = appendField(b, "decision", j.Decision); err != nil {
			return nil, err
		}
	}
	if len(j.Addresses) > 0 {
		if b, err = appendField(b, "addresses", j.Addresses); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// AppendFields adds the fields of v (a struct, encoded as encoding/json
// would) to the JSON object obj: the fields a type embedding ResultJSON
// adds after its own.
func AppendFields(obj []byte, v any) ([]byte, error) {
	more, err := encodeJSON(nil, v)
	if err != nil {
		return nil, err
	}
	if len(more) <= 2 {
		return obj, nil
	}
	obj = append(obj[:len(obj)-1], ',')
	return append(obj, more[1:]...), nil
}

// appendField adds "key": v to the JSON object obj.
func appendField(obj []byte, key string, v any) ([]byte, error) {
	k, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	obj = append(append(append(obj[:len(obj)-1], ','), k...), ':')
	obj, err = encodeJSON(obj, v)
	if err != nil {
		return nil, err
	}
	return append(obj, '}'), nil
}

// encodeJSON appends v's encoding to b, without escaping HTML: the
// encoder that asked for the whole escapes it, or not, as it was told.
func encodeJSON(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}
