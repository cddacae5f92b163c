package crfbeam

import (
	"bytes"
	"cmp"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/rtrackers/offsetrange"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/simdcrf/simdcrf/format"
)

func init() {
	for _, t := range []any{Sequence{}, DeadLetter{}, rawSeq{}, regionStat{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	register.DoFn5x1[context.Context, *sdf.LockRTracker, fileio.ReadableFile, func(rawSeq), func(regionStat), error](&readFn{})
	register.DoFn5x1[context.Context, rawSeq, func(*regionStat) bool, func(Sequence), func(DeadLetter), error](&locateFn{})
	register.Emitter1[rawSeq]()
	register.Emitter1[regionStat]()
	register.Emitter1[Sequence]()
	register.Emitter1[DeadLetter]()
	register.Iter1[regionStat]()
}

// Sequence is one sequence of an input file: its lines, as they are in the
// file, and where they are.
type Sequence struct {
	File  string // the file, as the glob matched it
	Index int64  // 0-based index of the sequence in File
	Line  int64  // number (from 1) of Text's first line in File
	Text  []byte // the lines of the sequence, with their line ends
}

// DeadLetter is a sequence that could not be read or tagged, with where it
// is and what is wrong. Line 0 means the whole file.
type DeadLetter struct {
	File  string
	Line  int64
	Index int64 // the sequence's index in File (the next one, for a read error)
	Error string
}

// String gives the place and the problem as simdcrf's errors do,
// FILE:LINE: PROBLEM.
func (d DeadLetter) String() string {
	if d.Line <= 0 {
		return d.File + ": " + d.Error
	}
	return fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Error)
}

// ReadOptions say how to read sequences.
type ReadOptions struct {
	// Spec is the input format and feature extraction, as simdcrf learn
	// and tag take them (a model's: see Spec, with its unknown-word
	// guesser). An empty format is resolved per file, as simdcrf does
	// (conllu for *.conllu[.gz]).
	Spec format.Spec
	// SplitSize is the size in bytes of the pieces a file is first split
	// into, to be read in parallel (0: 64 MiB). The runner may split them
	// further. Gzip-compressed files (*.gz) are read whole.
	SplitSize int64
}

// Input is what Read gives.
type Input struct {
	Sequences beam.PCollection // of Sequence, one per well-formed sequence
	Errors    beam.PCollection // of DeadLetter: malformed sequences, unreadable files
}

// Read reads the sequences of the files matched by glob (local paths or any
// URL Beam's file systems know) in the format of o.Spec. A file is split
// into byte ranges read in parallel, cut at the blank lines between
// sequences; each sequence is keyed by its file and its index there, and
// has its line number. A malformed sequence goes to Errors with its place
// and takes its index, so that the indexes of the others are the ones
// simdcrf tag's output order gives them.
func Read(s beam.Scope, glob string, o ReadOptions) Input {
	s = s.Scope("crfbeam.Read")
	filesystem.ValidateScheme(glob)
	if o.SplitSize <= 0 {
		o.SplitSize = 64 << 20
	}
	files := fileio.ReadMatches(s, fileio.MatchFiles(s, glob))
	fn := &readFn{rangeFn: rangeFn{Spec: o.Spec, SplitSize: o.SplitSize}}
	if g := o.Spec.Guesser; g != nil {
		// (not JSON: the DoFn carries it encoded; Setup decodes it)
		fn.Guesser, _ = g.MarshalBinary() // (it cannot fail)
	}
	raw, stats := beam.ParDo2(s, fn, files)
	seqs, dead := beam.ParDo2(s, &locateFn{}, raw, beam.SideInput{Input: stats})
	return Input{Sequences: seqs, Errors: dead}
}

func isGzip(path string) bool { return strings.HasSuffix(path, ".gz") }

// A region is the part of a file one call of a reading DoFn read: from the
// position of the first block it took (0 for the call that starts the
// file) to the position of the first block it left (or the end of the
// file). The regions of a file tile it, so the line and sequence counts of
// the regions before one give the line number and index its blocks start
// from. The reading DoFns, which cannot know them, number lines and
// sequences within their regions; the counts of all regions, a side input
// once every range is read, make them the file's (regionBases).

// rawSeq is a sequence (or a malformed one, Err set) placed in its region.
type rawSeq struct {
	File    string
	Region  int64 // where the region starts
	Local   int64 // index among the region's sequences
	Line    int64 // lines from the region's first line to Text's first
	Text    []byte
	Err     string
	ErrLine int64 // lines from the region's first line to the error's, or -1 for the whole file
}

// regionStat is what a region holds.
type regionStat struct {
	File  string
	Start int64
	Lines int64 // line ends in the region
	Seqs  int64 // sequences, well-formed or not
}

// rangeFn is what the splittable DoFns that read files share: the
// restriction is a byte range of a file and the positions claimed are those
// of blocks (format.BlockReader), so that the runner may split a range
// while it is read, at any block.
type rangeFn struct {
	Spec      format.Spec
	SplitSize int64

	parsers map[string]*format.Parser // by format
	seq     format.Sequence
}

func (fn *rangeFn) CreateInitialRestriction(f fileio.ReadableFile) offsetrange.Restriction {
	if isGzip(f.Metadata.Path) {
		return offsetrange.Restriction{Start: 0, End: 1} // one position: the whole file
	}
	return offsetrange.Restriction{Start: 0, End: f.Metadata.Size}
}

func (fn *rangeFn) SplitRestriction(f fileio.ReadableFile, rest offsetrange.Restriction) []offsetrange.Restriction {
	if isGzip(f.Metadata.Path) {
		return []offsetrange.Restriction{rest}
	}
	splits := rest.SizedSplits(fn.SplitSize)
	if n := len(splits); n > 1 && splits[n-1].End-splits[n-1].Start < fn.SplitSize/4 {
		splits[n-2].End = splits[n-1].End // no small last piece
		splits = splits[:n-1]
	}
	return splits
}

func (fn *rangeFn) RestrictionSize(f fileio.ReadableFile, rest offsetrange.Restriction) float64 {
	if isGzip(f.Metadata.Path) {
		return float64(f.Metadata.Size)
	}
	return rest.Size()
}

func (fn *rangeFn) CreateTracker(rest offsetrange.Restriction) *sdf.LockRTracker {
	return sdf.NewLockRTracker(offsetrange.NewTracker(rest))
}

func (fn *rangeFn) parser(path string) (*format.Parser, string, error) {
	spec := fn.Spec.Resolve(path)
	if p := fn.parsers[spec.Format]; p != nil {
		return p, spec.Format, nil
	}
	o, err := spec.Options()
	if err != nil {
		return nil, "", err
	}
	p, err := format.NewParser(path, o)
	if err != nil {
		return nil, "", err
	}
	if fn.parsers == nil {
		fn.parsers = map[string]*format.Parser{}
	}
	fn.parsers[spec.Format] = p
	return p, spec.Format, nil
}

// corrupt reports a compressed file's damage, which reading it again will
// not mend (as it would a failed read from storage).
func corrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce)
}

// read reads the blocks of the tracker's range of f: each well-formed
// sequence goes to seq (parsed, with the block's text and the lines from
// the region's first line to the text's first), each malformed one to bad,
// and the region to stat once read. A damaged compressed file goes to bad
// (the rest of it is lost); a failed read is an error, for the runner to
// retry.
func (fn *rangeFn) read(ctx context.Context, rt *sdf.LockRTracker, f fileio.ReadableFile,
	seq func(r rawSeq, s *format.Sequence, text []byte), bad func(rawSeq), stat func(regionStat)) error {
	path := f.Metadata.Path
	p, formatName, err := fn.parser(path)
	if err != nil {
		return err
	}
	rest := rt.GetRestriction().(offsetrange.Restriction)
	if testHookRange != nil {
		testHookRange(path, rest.Start)
	}
	gz := isGzip(path)
	if gz && !rt.TryClaim(int64(0)) {
		return nil
	}
	// The region: as soon as it is known, its start and the number (in
	// the reader's count) of its first line.
	region, regionLine := int64(-1), 0
	if rest.Start == 0 || gz {
		region, regionLine = 0, 1
	}
	var local int64
	damaged := func(err error, line int) {
		bad(rawSeq{File: path, Region: region, Local: local, Err: err.Error(), ErrLine: int64(line - regionLine)})
		stat(regionStat{File: path, Start: region, Lines: int64(line - regionLine), Seqs: local})
	}

	from := int64(0)
	if !gz && rest.Start > 0 {
		// From the byte before the range: the blocks whose position is
		// in the range are found there (see format.BlockReader).
		from = rest.Start - 1
	}
	rc, err := openAt(ctx, f, from)
	if err != nil {
		if gz && corrupt(err) {
			damaged(err, 0)
			return nil
		}
		return err
	}
	defer rc.Close()
	br := format.NewBlockReader(rc, from, formatName)
	end := 0 // the reader's number of the line where the region ends
	for {
		b, err := br.Next()
		if errors.Is(err, io.EOF) {
			end = br.Line()
			if !gz {
				rt.TryClaim(rt.GetRestriction().(offsetrange.Restriction).End)
			}
			break
		}
		if err != nil {
			if gz && corrupt(err) {
				damaged(fmt.Errorf("read error: %w", err), br.Line())
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if b.Pos < rest.Start {
			continue // a range from 1 reads from 0, where a block has position 0
		}
		if !gz && !rt.TryClaim(b.Pos) {
			end = b.PosLine
			break
		}
		if region < 0 {
			region, regionLine = b.Pos, b.PosLine
		}
		off := int64(b.Line - regionLine)
		err = p.Parse(&fn.seq, path, b.Text, int(off)+1)
		if errors.Is(err, io.EOF) {
			continue // comments only: no sequence
		}
		r := rawSeq{File: path, Region: region, Local: local, Line: off}
		if err != nil {
			r.Err, r.ErrLine = err.Error(), off
			var fe *format.Error
			if errors.As(err, &fe) && fe.Line > 0 {
				r.Err, r.ErrLine = fe.Msg, int64(fe.Line-1)
			}
			bad(r)
		} else {
			seq(r, &fn.seq, b.Text)
		}
		local++
	}
	if region >= 0 {
		stat(regionStat{File: path, Start: region, Lines: int64(end - regionLine), Seqs: local})
		if testHookRegion != nil {
			testHookRegion(path)
		}
	}
	return nil
}

// Test hooks: testHookRange, when set, is called as a range starts to be
// read; testHookRegion with the file of each region read.
var (
	testHookRange  func(file string, start int64)
	testHookRegion func(file string)
)

// readFn reads sequences (Read).
type readFn struct {
	rangeFn
	Guesser []byte // Spec.Guesser, encoded (format.UnmarshalGuesser)
}

func (fn *readFn) Setup() error {
	if fn.Guesser == nil {
		return nil
	}
	g, err := format.UnmarshalGuesser(fn.Guesser)
	if err != nil {
		return err
	}
	fn.Spec.Guesser = g
	return nil
}

func (fn *readFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, f fileio.ReadableFile, emit func(rawSeq), stat func(regionStat)) error {
	return fn.read(ctx, rt, f, func(r rawSeq, _ *format.Sequence, text []byte) {
		r.Text = bytes.Clone(text)
		emit(r)
	}, emit, stat)
}

// locateFn gives the sequences of regions their places in their files.
type locateFn struct {
	regions regions // StartBundle
}

func (fn *locateFn) StartBundle(stats func(*regionStat) bool, _ func(Sequence), _ func(DeadLetter)) {
	fn.regions = regionBases(stats)
}

func (fn *locateFn) ProcessElement(ctx context.Context, r rawSeq, _ func(*regionStat) bool, emit func(Sequence), dead func(DeadLetter)) error {
	if r.Err != "" {
		d, err := fn.regions.dead(r)
		if err != nil {
			return err
		}
		deadLetters.Inc(ctx, 1)
		dead(d)
		return nil
	}
	b, err := fn.regions.base(r.File, r.Region)
	if err != nil {
		return err
	}
	emit(Sequence{File: r.File, Index: b.index + r.Local, Line: b.line + r.Line, Text: r.Text})
	return nil
}

// regions holds, for each file, where its regions start (in order).
type regions map[string][]regionBase

// regionBase is where a region starts: its position, and the line number
// and sequence index there.
type regionBase struct {
	start, line, index int64
}

// regionBases adds up the regions of each file.
func regionBases(stats func(*regionStat) bool) regions {
	byFile := map[string][]regionStat{}
	var st regionStat
	for stats(&st) {
		byFile[st.File] = append(byFile[st.File], st)
	}
	out := make(regions, len(byFile))
	for file, rs := range byFile {
		slices.SortFunc(rs, func(a, b regionStat) int { return cmp.Compare(a.Start, b.Start) })
		bases := make([]regionBase, len(rs))
		line, index := int64(1), int64(0)
		for i, r := range rs {
			bases[i] = regionBase{start: r.Start, line: line, index: index}
			line += r.Lines
			index += r.Seqs
		}
		out[file] = bases
	}
	return out
}

// base returns where the region of file that starts at start starts.
func (rs regions) base(file string, start int64) (regionBase, error) {
	bs := rs[file]
	i, ok := slices.BinarySearchFunc(bs, start, func(b regionBase, start int64) int { return cmp.Compare(b.start, start) })
	if !ok {
		return regionBase{}, fmt.Errorf("crfbeam: %s: no region read at %d", file, start)
	}
	return bs[i], nil
}

// dead places a malformed sequence.
func (rs regions) dead(r rawSeq) (DeadLetter, error) {
	b, err := rs.base(r.File, r.Region)
	return DeadLetter{File: r.File, Line: b.line + r.ErrLine, Index: b.index + r.Local, Error: r.Err}, err
}
