package format

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// Reading a file in pieces.
//
// No sequence holds a blank line (an empty one in CRFsuite's format, one
// of white space only in the column formats), so a file is a series of
// blocks, runs of lines between blank lines, each holding at most one
// sequence. A BlockReader yields the blocks and a Parser reads the sequence
// of one block, with the line numbers it has in its file. Together they
// let independent readers share one large file, each taking a byte range:
//
// Every block has a position, Pos: where the last blank line before it
// starts, or 0 for a block that starts the input. Positions grow from block
// to block, and the blocks whose position is at least p are found by
// reading from byte p−1 on (the line holding byte p−1 is skipped, and a
// block is recognised by the blank line before it). So readers of the byte
// ranges [p₀, p₁), [p₁, p₂), … that each take the blocks whose position
// lies in their range (and read each such block to its end, past the
// range if need be) take every block of the file exactly once. A range
// may hold no position (inside one long sequence); then its reader takes
// nothing. This is textio's rule for lines in Apache Beam, lifted to
// blocks of lines.

// A Block is a run of non-blank lines, what a BlockReader yields.
type Block struct {
	Pos     int64  // the block's position: where the blank line before it starts, or 0
	PosLine int    // number of the line that starts at Pos
	Offset  int64  // where the block's first line starts
	Line    int    // number of the block's first line
	Text    []byte // the block's lines with their line ends (valid until the next Next)
}

// A BlockReader splits its input into blocks, each holding at most one
// sequence of the format it was made for. Offsets are those of the file the
// input is part of; line numbers count from 1 at the input's first line,
// and so are the file's own when the input starts the file.
type BlockReader struct {
	br      *bufio.Reader
	long    []byte // a line longer than br's buffer
	off     int64  // offset of the next unread byte
	line    int    // number of the next unread line
	empty   bool   // blank means empty (CRFsuite) rather than white space only
	partial bool   // the first line began before the input: skip it

	blank     bool // the last line read was blank
	blankOff  int64
	blankLine int

	text []byte
	err  error
}

// NewBlockReader returns a reader of the blocks of r for the format (as
// Options.Format: "crfsuite", the default, or "conll" or "conllu"), where
// r holds the bytes of a file from offset on. With offset > 0 the line
// holding the first byte is taken to have begun earlier: it is skipped, and
// so is the rest of any block it belongs to. To read the blocks whose
// position is at least p > 0, give the file from byte p−1 on.
func NewBlockReader(r io.Reader, offset int64, format string) *BlockReader {
	f := strings.ToLower(format)
	return &BlockReader{
		br:      bufio.NewReaderSize(r, 1<<16),
		off:     offset,
		line:    1,
		empty:   f == "" || f == "crfsuite",
		partial: offset > 0,
	}
}

// Offset returns the offset of the next byte the reader would read: the end
// of the input once Next has returned io.EOF.
func (b *BlockReader) Offset() int64 { return b.off }

// Line returns the number of the line that starts at Offset.
func (b *BlockReader) Line() int { return b.line }

// Next returns the next block. It returns io.EOF at the end of the input,
// or the error of the underlying reader; a block cut short by such an
// error is not returned.
func (b *BlockReader) Next() (Block, error) {
	var blk Block
	in := false
	b.text = b.text[:0]
	for {
		off, n := b.off, b.line
		line, ok := b.readLine()
		if !ok {
			break
		}
		if b.partial {
			b.partial = false
			continue
		}
		if b.isBlank(line) {
			b.blank, b.blankOff, b.blankLine = true, off, n
			if in {
				blk.Text = b.text
				return blk, nil
			}
			continue
		}
		if !in {
			switch {
			case off == 0:
				blk.Pos, blk.PosLine = 0, 1
			case b.blank:
				blk.Pos, blk.PosLine = b.blankOff, b.blankLine
			default:
				continue // the rest of a block that began before the input
			}
			in = true
			b.blank = false
			blk.Offset, blk.Line = off, n
		}
		b.text = append(b.text, line...)
	}
	if b.err != nil && !errors.Is(b.err, io.EOF) {
		return Block{}, b.err
	}
	if in {
		blk.Text = b.text
		return blk, nil
	}
	return Block{}, io.EOF
}

// readLine returns the next line with its line end, or ok=false at the end
// of the input or on an error (kept in b.err).
func (b *BlockReader) readLine() (line []byte, ok bool) {
	if b.err != nil {
		return nil, false
	}
	line, err := readLine(b.br, &b.long)
	if err != nil {
		b.err = err
		if len(line) == 0 || !errors.Is(err, io.EOF) {
			return nil, false
		}
	}
	b.off += int64(len(line))
	if line[len(line)-1] == '\n' {
		b.line++
	}
	return line, true
}

// isBlank reports whether a line (with its line end) separates sequences:
// in CRFsuite's format an empty line (CRLF counts as a line end), in the
// column formats one of white space only.
func (b *BlockReader) isBlank(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if b.empty {
		return len(line) == 0 || len(line) == 1 && line[0] == '\r'
	}
	return blank(line)
}

// A Parser reads the sequence of one block of text held in memory (as a
// BlockReader yields it), numbering lines as its file does, and reuses its
// memory from call to call as a Reader does.
type Parser struct {
	src   bytes.Reader
	r     Reader
	lines *lineReader
	rest  Sequence
}

// NewParser returns a Parser for the format and features of o; name is the
// file name for errors until Parse is given another.
func NewParser(name string, o Options) (*Parser, error) {
	p := &Parser{}
	r, err := NewReader(&p.src, name, o)
	if err != nil {
		return nil, err
	}
	p.r = r
	switch r := r.(type) {
	case *crfsuiteReader:
		p.lines = r.lines
	case *ColumnReader:
		p.lines = r.lines
	case *conlluReader:
		p.lines = r.lines
	}
	return p, nil
}

// Parse reads the sequence that text holds into s; text comes from file
// and its first line is line number line there. Each call reads text as a
// file of its own would be read (a column file's observation columns, when
// Options.Columns is 0, are those of its own first row), but for the line
// numbers. Parse returns io.EOF when text holds no sequence (only blank or
// comment lines), and an *Error when text is malformed or holds more than
// one sequence. Names and labels in s are valid until the next call.
func (p *Parser) Parse(s *Sequence, file string, text []byte, line int) error {
	p.src.Reset(text)
	p.lines.br.Reset(&p.src)
	p.lines.n = line - 1
	p.lines.err = nil
	switch r := p.r.(type) {
	case *crfsuiteReader:
		r.file = file
	case *ColumnReader:
		r.file = file
		if !r.optional {
			r.columns, r.known = 0, false
		}
	case *conlluReader:
		r.file = file
	}
	if err := p.r.Read(s); err != nil {
		return err
	}
	// A second sequence is an error; at the end of the text a Read writes
	// nothing that s views.
	switch err := p.r.Read(&p.rest); {
	case err == nil:
		return errorf(file, p.rest.Line, "a second sequence in one block (sequences are separated by blank lines)")
	case !errors.Is(err, io.EOF):
		return err
	}
	return nil
}
