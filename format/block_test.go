package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// blockCases are inputs of each format with what makes splitting hard:
// leading, repeated and trailing blank lines, blank lines of white space
// (which separate column sentences but not CRFsuite ones), CRLF, comment
// blocks that hold no sequence, long lines and a last line without its
// line end. The long lines are longer than a reader's buffer when long is
// set.
func blockCases(t testing.TB, long bool) []struct {
	name string
	o    Options
	in   string
} {
	tp, err := ParseTemplate(strings.NewReader("U00:%x[0,0]\nU01:%x[-1,0]/%x[0,1]\n"), "t.tpl")
	if err != nil {
		t.Fatal(err)
	}
	n := 20
	if long {
		n = 70000
	}
	ys := strings.Repeat("y", n)
	return []struct {
		name string
		o    Options
		in   string
	}{
		{"crfsuite", Options{Format: "crfsuite"},
			"\n\nB-NP\tw=He\tpos=PRP:2.5\n@weight:3\nO\tx\\:y\\\\:0.5\n\n\n# only a comment\n\t\n\n" +
				"A\ta\r\nB\t \tb\r\n\r\n@weight:2\nC\t" + ys + "\n \nD\td\n\n\n\nE\te"},
		{"conll", Options{Format: "conll", Template: tp, Columns: 2},
			"  \n\nHe PRP B-NP\nreckons VBZ B-VP\n\t\n \nthe DT\ncurrent JJ\n\n\n" +
				ys + " NN O\n\r\nx y z\r\na b c\r\n   \t \nlast word L"},
		{"conllu", Options{Format: "conllu", Features: "pos"},
			"# newdoc\n\n# sent_id = 1\n1\tHe\the\tPRON\tPRP\t_\t_\t_\t_\t_\n2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n" +
				"2\tdo\tdo\tAUX\tVBP\t_\t_\t_\t_\t_\n3\tn't\tnot\tPART\tRB\t_\t_\t_\t_\t_\n \n\n" +
				"# sent_id = 2\n1\tGo\tgo\t_\tVB\t_\t_\t_\t_\t_\n\n# a comment block\n\n" +
				"1\tend\tend\tNOUN\tNN\t_\t_\t_\t_\t_"},
	}
}

// lineOf returns the number of the line that starts at off in in.
func lineOf(in string, off int64) int { return 1 + strings.Count(in[:off], "\n") }

// whole reads in with a Reader.
func whole(t *testing.T, in string, o Options) []Sequence {
	t.Helper()
	r, err := NewReader(strings.NewReader(in), "f", o)
	if err != nil {
		t.Fatal(err)
	}
	var out []Sequence
	var s Sequence
	for {
		err := r.Read(&s)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, copySeq(&s))
	}
}

// byRanges reads in as readers of the byte ranges between the cuts do,
// each taking the blocks whose position lies in its range and parsing
// them with true line numbers, found as a pipeline finds them: from each
// range's own line count and the line counts of the ranges before it.
func byRanges(t *testing.T, in string, o Options, cuts []int64) []Sequence {
	t.Helper()
	p, err := NewParser("f", o)
	if err != nil {
		t.Fatal(err)
	}
	bounds := append(append([]int64{0}, cuts...), int64(len(in)))
	var out []Sequence
	var s Sequence
	lineBase := 1 // true number of the line at the current region's start
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		start := max(lo-1, 0)
		br := NewBlockReader(strings.NewReader(in[start:]), start, o.Format)
		first := true
		regionLine := 1 // local number of the line at the region's start
		endLine := 0
		for {
			b, err := br.Next()
			if errors.Is(err, io.EOF) {
				endLine = br.Line()
				if br.Offset() != int64(len(in)) {
					t.Fatalf("at EOF, Offset %d, want %d", br.Offset(), len(in))
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Pos < lo {
				if start > 0 {
					t.Fatalf("range [%d,%d): block at position %d", lo, hi, b.Pos)
				}
				continue // lo = 1: the input starts the file, so the block at 0 is found too
			}
			if b.Pos >= hi {
				endLine = b.PosLine
				break
			}
			if first && lo > 0 {
				regionLine = b.PosLine
			}
			first = false
			if got, want := string(b.Text), in[b.Offset:b.Offset+int64(len(b.Text))]; got != want {
				t.Fatalf("block text %q is not the input's %q", got, want)
			}
			if lineOf(in, b.Pos) != lineBase+b.PosLine-regionLine || lineOf(in, b.Offset) != lineBase+b.Line-regionLine {
				t.Fatalf("block at %d: line %d (position line %d), region line %d, base %d", b.Offset, b.Line, b.PosLine, regionLine, lineBase)
			}
			err = p.Parse(&s, "f", b.Text, lineBase+b.Line-regionLine)
			if errors.Is(err, io.EOF) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, copySeq(&s))
		}
		if !first || lo == 0 {
			lineBase += endLine - regionLine
		}
	}
	return out
}

func TestBlockRanges(t *testing.T) {
	for _, c := range blockCases(t, true) {
		t.Run(c.name, func(t *testing.T) {
			want := whole(t, c.in, c.o)
			if len(want) < 3 {
				t.Fatalf("only %d sequences", len(want))
			}
			if got := byRanges(t, c.in, c.o, nil); !reflect.DeepEqual(got, want) {
				t.Fatalf("blocks of the whole input:\n%+v\nwant\n%+v", got, want)
			}
			// Every cut point, then random partitions.
			n := int64(len(c.in))
			for p := int64(1); p < n; p++ {
				if c.in[p-1] == 'y' && c.in[p] == 'y' && p%997 != 0 {
					continue // inside the long line: a few cuts do
				}
				if got := byRanges(t, c.in, c.o, []int64{p}); !reflect.DeepEqual(got, want) {
					t.Fatalf("cut at %d:\n%+v\nwant\n%+v", p, got, want)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 300 {
				var cuts []int64
				for p := int64(0); ; {
					p += 1 + rng.Int64N(max(n/4, 1))
					if p >= n {
						break
					}
					cuts = append(cuts, p)
				}
				if got := byRanges(t, c.in, c.o, cuts); !reflect.DeepEqual(got, want) {
					t.Fatalf("cuts %v:\n%+v\nwant\n%+v", cuts, got, want)
				}
			}
		})
	}
}

func TestParserErrors(t *testing.T) {
	tp := mustTemplate(t, "U:%x[0,0]\n")
	p, err := NewParser("a.txt", Options{Format: "conll", Template: tp, Columns: 1})
	if err != nil {
		t.Fatal(err)
	}
	var s Sequence
	wantErr(t, p.Parse(&s, "b.txt", []byte("x A\ny B C\n"), 41), "b.txt:42: expected 2 columns (or 1 without a label), found 3")
	wantErr(t, p.Parse(&s, "b.txt", []byte("x A\n\ny B\n"), 7), "b.txt:9: a second sequence in one block")
	// After errors, a good block reads as if nothing had happened.
	if err := p.Parse(&s, "c.txt", []byte("x A\ny B\n"), 100); err != nil {
		t.Fatal(err)
	}
	if s.File != "c.txt" || s.Line != 100 || !reflect.DeepEqual(s.Lines, []int{100, 101}) || string(s.Labels[1]) != "B" {
		t.Fatalf("got %+v", s)
	}
	if err := p.Parse(&s, "c.txt", []byte("\tx\ny\n"), 1); err != nil || s.Labels != nil || s.Len() != 2 {
		t.Fatalf("unlabelled: %v, %+v", err, s)
	}
	if err := p.Parse(&s, "c.txt", []byte("\n \n"), 1); !errors.Is(err, io.EOF) {
		t.Fatalf("blank text: %v, want io.EOF", err)
	}
	// Without a given column count, each block has its own, as a file would.
	p, _ = NewParser("a.txt", Options{Format: "conll", Template: tp})
	if err := p.Parse(&s, "a.txt", []byte("x y A\n"), 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Parse(&s, "a.txt", []byte("x A\n"), 3); err != nil {
		t.Fatal(err)
	}
	wantErr(t, p.Parse(&s, "a.txt", []byte("x A\nx y A\n"), 5), "a.txt:6: expected 2 columns")
	p, _ = NewParser("a.txt", Options{Format: "crfsuite"})
	wantErr(t, p.Parse(&s, "d.txt", []byte("A\ta\n@x\n"), 3), "d.txt:4: unrecognized declaration")
}

func TestBlockReaderReadError(t *testing.T) {
	br := NewBlockReader(io.MultiReader(strings.NewReader("A\ta\n\nB\tb\n"), errReader{}), 0, "crfsuite")
	if b, err := br.Next(); err != nil || string(b.Text) != "A\ta\n" {
		t.Fatalf("first block %q, %v", b.Text, err)
	}
	if _, err := br.Next(); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("got %v, want the read error", err)
	}
}

// FuzzBlocks checks, for any input and cut, that the readers of the two
// ranges take every block of the input once, with its own bytes.
func FuzzBlocks(f *testing.F) {
	for _, c := range blockCases(f, false) {
		f.Add(c.in, uint16(len(c.in)/2), c.o.Format == "crfsuite")
	}
	f.Fuzz(func(t *testing.T, in string, cut uint16, crfsuite bool) {
		format := "conll"
		if crfsuite {
			format = "crfsuite"
		}
		all := blocks(t, in, 0, format, 0, int64(len(in)))
		p := int64(cut) % int64(len(in)+1)
		var got []Block
		if p == 0 {
			got = all
		} else {
			got = append(blocks(t, in, 0, format, 0, p), blocks(t, in[p-1:], p-1, format, p, int64(len(in)))...)
		}
		if len(got) != len(all) {
			t.Fatalf("cut at %d: %d blocks, want %d", p, len(got), len(all))
		}
		for i := range got {
			if got[i].Pos != all[i].Pos || got[i].Offset != all[i].Offset || !bytes.Equal(got[i].Text, all[i].Text) {
				t.Fatalf("cut at %d, block %d: %+v, want %+v", p, i, got[i], all[i])
			}
		}
	})
}

// blocks returns the blocks of in (the file from offset on) whose position
// lies in [lo, hi), copied.
func blocks(t *testing.T, in string, offset int64, format string, lo, hi int64) []Block {
	br := NewBlockReader(strings.NewReader(in), offset, format)
	var out []Block
	last := int64(-1)
	for {
		b, err := br.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Pos <= last || b.Pos < lo && offset > 0 || len(b.Text) == 0 {
			t.Fatalf("block %+v after position %d (range from %d)", b, last, lo)
		}
		last = b.Pos
		if b.Pos < lo {
			continue
		}
		if b.Pos >= hi {
			return out
		}
		b.Text = bytes.Clone(b.Text)
		out = append(out, b)
	}
}
