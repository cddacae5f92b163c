package corpus

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/sparse"
)

// ReadLexicon reads a lexicon file of candidate labels: one word per line,
// then a tab, then the labels the word may take, separated by white space
// ("word<TAB>LABEL LABEL…"); a word on several lines takes the labels of
// all. Blank lines are skipped. Labels are given ids in labels (the
// training data's); those it does not know are left out (a model cannot
// predict them), and counted in unknown. The words are the input's word
// column as it is (FORM in CoNLL-U), case and all.
func ReadLexicon(path string, labels *sparse.Dict) (lex *sparse.Lexicon, unknown int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return readLexicon(f, path, labels)
}

func readLexicon(r io.Reader, name string, labels *sparse.Dict) (*sparse.Lexicon, int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	var (
		b       sparse.LexiconBuilder
		unknown int
		entries int
	)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimRight(sc.Bytes(), "\r")
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		bad := func(msg string, args ...any) error {
			return &format.Error{File: name, Line: line, Msg: fmt.Sprintf(msg, args...)}
		}
		if !utf8.Valid(text) {
			return nil, 0, bad("not UTF-8")
		}
		word, rest, ok := bytes.Cut(text, []byte{'\t'})
		if !ok {
			return nil, 0, bad("no tab: want WORD<TAB>LABEL [LABEL…]")
		}
		if len(word) == 0 {
			return nil, 0, bad("empty word before the tab")
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			return nil, 0, bad("no labels for %q", word)
		}
		entries++
		for _, l := range fields {
			y, ok := labels.LookupBytes(l)
			if !ok {
				unknown++
				continue
			}
			b.Add(word, y)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, 0, &format.Error{File: name, Line: line + 1, Msg: err.Error()}
	}
	if entries == 0 {
		return nil, 0, fmt.Errorf("%s: no entries (want lines WORD<TAB>LABEL [LABEL…])", name)
	}
	return b.Build(), unknown, nil
}
