package render

// Text is -o text: each result's own text form.
var Text Format = text{}

type text struct{}

func (text) Write(w Writer, r Result) error { return r.Text(w) }
