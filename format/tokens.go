package format

import "fmt"

// A Tokens turns sentences held in memory, one row of observation columns
// per token, into attribute sequences: the features of a template or a
// built-in feature set, exactly as a column file (ColumnReader) with the
// same rows gives them, with the first column as each item's word. It
// reuses its memory as a Reader does; not for concurrent use.
type Tokens struct {
	fx      *extractor
	columns int // Options.Columns: every row has that many (0: any, as the sentence's first row)
	checked int // a column count the template was checked against
	sent    sentence
	b, bb   builder
}

// NewTokens returns a Tokens for o's template or feature set (o.Format is
// ignored); o.Columns, if not 0, is the number of columns every row must
// have, else all rows of a sentence must have as many as its first.
func NewTokens(o Options) (*Tokens, error) {
	if o.Columns < 0 {
		return nil, fmt.Errorf("negative column count %d", o.Columns)
	}
	fx, err := newExtractor(Options{Format: "conll", Template: o.Template, Features: o.Features, Guesser: o.Guesser}, "tokens")
	if err != nil {
		return nil, err
	}
	tk := &Tokens{fx: fx, columns: o.Columns}
	if tk.columns > 0 {
		if err := fx.check(tk.columns, "tokens", 0); err != nil {
			return nil, err
		}
		tk.checked = tk.columns
	}
	return tk, nil
}

// TokenError is what Sequence returns for a malformed sentence: the
// position of the row at fault (−1: the sentence as a whole) and why.
type TokenError struct {
	Pos int
	Msg string
}

func (e *TokenError) Error() string {
	if e.Pos < 0 {
		return e.Msg
	}
	return fmt.Sprintf("position %d: %s", e.Pos, e.Msg)
}

// Sequence sets s to the attributes of the sentence rows (row t holds the
// observation columns of token t) and
// its labels (nil for none, else one per row, "" for a row without one).
// Line numbers in s are positions from 1. Names and labels in s are valid
// until the next call.
func (tk *Tokens) Sequence(s *Sequence, rows [][]string, labels []string) error {
	s.reset("")
	if labels != nil && len(labels) != len(rows) {
		return &TokenError{Pos: -1, Msg: fmt.Sprintf("%d tokens but %d labels", len(rows), len(labels))}
	}
	if len(rows) == 0 {
		return nil
	}
	ncols := tk.columns
	if ncols == 0 {
		ncols = len(rows[0])
		if ncols == 0 {
			return &TokenError{Pos: 0, Msg: "a token has no columns"}
		}
		if ncols != tk.checked {
			if err := tk.fx.check(ncols, "tokens", 0); err != nil {
				return &TokenError{Pos: 0, Msg: err.Error()}
			}
			tk.checked = ncols
		}
	}
	tk.sent.reset(ncols)
	for t, row := range rows {
		if len(row) != ncols {
			if tk.columns > 0 {
				return &TokenError{Pos: t, Msg: fmt.Sprintf("%d columns, want %d", len(row), ncols)}
			}
			return &TokenError{Pos: t, Msg: fmt.Sprintf("%d columns, but the sentence's first token has %d", len(row), ncols)}
		}
		for _, f := range row {
			tk.sent.text = append(tk.sent.text, f...)
			tk.sent.offs = append(tk.sent.offs, len(tk.sent.text)-len(f), len(tk.sent.text))
		}
		if labels != nil && labels[t] != "" {
			start := len(tk.sent.text)
			tk.sent.text = append(tk.sent.text, labels[t]...)
			tk.sent.labs = append(tk.sent.labs, start, len(tk.sent.text))
			tk.sent.labels = true
		} else {
			tk.sent.labs = append(tk.sent.labs, -1, -1)
		}
		tk.sent.rows++
		s.Lines = append(s.Lines, t+1)
	}
	tk.sent.emit(s, tk.fx, &tk.b, &tk.bb)
	return nil
}
