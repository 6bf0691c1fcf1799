package report

import (
	"encoding/json"

	"github.com/healthctl/healthctl/internal/output"
)

// ResultFields is ResultJSON without its MarshalJSON: encoding/json
// writes its fields in one pass, and those of a type that embeds
// *ResultFields after them (watch's lines). MarshalJSON is the result's
// JSON with a kind's answer: for one without (Answer nil) the two are the
// same bytes.
type ResultFields ResultJSON

// MarshalJSON writes the result's fields as encoding/json would, with the
// kind's answer as one more field under its kind's name ("grpc": {…})
// before the decision and the addresses: one field for every kind, the
// JSON users read unchanged. (A type that embeds ResultJSON has this
// method promoted: it writes its own fields with AppendFields.)
func (j ResultJSON) MarshalJSON() ([]byte, error) {
	var obj any
	if j.Answer != nil {
		obj = j.Answer.JSON()
	}
	if obj == nil {
		// No answer of a kind (HTTP, most lines of a sweep): the
		// fields as they are, in one pass.
		return output.AppendJSON(nil, (*ResultFields)(&j))
	}
	decision, addresses := j.Decision, j.Addresses
	j.Decision, j.Addresses = nil, nil
	b, err := output.AppendJSON(nil, (*ResultFields)(&j))
	if err != nil {
		return nil, err
	}
	j.Decision, j.Addresses = decision, addresses
	if b, err = appendField(b, j.Answer.Kind().Name, obj); err != nil {
		return nil, err
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
	more, err := output.AppendJSON(nil, v)
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
	obj, err = output.AppendJSON(obj, v)
	if err != nil {
		return nil, err
	}
	return append(obj, '}'), nil
}
