package crfbeam

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/fileio"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

func init() {
	beam.RegisterType(reflect.TypeOf(tagBatch{}))
	register.DoFn6x1[context.Context, *sdf.LockRTracker, fileio.ReadableFile, func(tagBatch), func(rawSeq), func(regionStat), error](&readTagFn{})
	register.DoFn2x0[tagBatch, func(int, tagBatch)](&shardFn{})
	register.Function1x2(emptyShard)
	register.DoFn4x1[context.Context, int, func(*tagBatch) bool, func(*regionStat) bool, error](&writeShardFn{})
	register.Emitter1[tagBatch]()
	register.Emitter2[int, tagBatch]()
	register.Iter1[tagBatch]()
}

// Config is what simdcrf-beam tag does.
type Config struct {
	Model  string // the model file
	Input  string // glob of the input files
	Output string // prefix of the output files
	Format string // the input format, when not the model's

	Text     model.TextOptions // what to print for each sequence (-r -p -i -l -n)
	Quiet    bool              // write no tagged shards (-q)
	Evaluate bool              // write the evaluation to EvaluationFile (-t)
	JSON     bool              // as a JSON object (--json)

	FailOnError bool  // fail at the first malformed sequence (--on-error fail)
	Shards      int   // output files (≥ 1)
	SplitSize   int64 // initial split size of input files (0: 64 MiB)
}

// ErrorsFile is where the pipeline of c writes the dead letters.
func (c Config) ErrorsFile() string { return c.Output + ".errors" }

// EvaluationFile is where the pipeline of c writes the evaluation.
func (c Config) EvaluationFile() string { return c.Output + ".eval" }

// Build adds to s the pipeline of c, what simdcrf-beam tag runs: the input
// files are read and tagged in one stage (a splittable DoFn over byte
// ranges that tags each sequence as it reads it, so that no input crosses
// the network and every range a runner splits off is tagged where it is
// read); the tagged sequences go to the shards of c.Output (ShardName) in
// input order, each after a line "#<TAB>FILE<TAB>INDEX"; the dead letters
// to ErrorsFile; with c.Evaluate the evaluation to EvaluationFile. The
// files are those the glob matches now, where the pipeline is built; m is
// the model at c.Model, read here for its input format and labels.
func Build(s beam.Scope, c Config, m *model.Model) error {
	if c.Input == "" || c.Output == "" || c.Model == "" {
		return errors.New("crfbeam: a model, an input glob and an output prefix are needed")
	}
	spec, err := Spec(m, format.Spec{Format: c.Format})
	if err != nil {
		return err
	}
	spec = spec.Resolve("")
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%s: %w", c.Model, err)
	}
	if c.SplitSize <= 0 {
		c.SplitSize = 64 << 20
	}
	for _, p := range []string{c.Output, c.Model} {
		if err := knownScheme(p); err != nil {
			return err
		}
	}
	files, err := Match(context.Background(), c.Input)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no files match %s", c.Input)
	}
	items := make([]any, len(files))
	for i, f := range files {
		items[i] = f
	}
	readable := fileio.ReadMatches(s, beam.Create(s, items...))
	fn := &readTagFn{rangeFn: rangeFn{Spec: spec, SplitSize: c.SplitSize},
		tagger: tagger{Model: c.Model, Format: c.Format, Text: c.Text, Evaluate: c.Evaluate}}
	tagged, bad, stats := beam.ParDo3(s, fn, readable)

	_, dead := beam.ParDo2(s, &locateFn{}, bad, beam.SideInput{Input: stats})
	WriteErrors(s, c.ErrorsFile(), dead)
	if c.FailOnError {
		FailOnError(s, dead)
	}
	if !c.Quiet {
		write(s, c.Output, max(c.Shards, 1), files, tagged, stats)
	}
	if c.Evaluate {
		WriteEvaluation(s, c.EvaluationFile(), evaluate(s, tagged, m.LabelNames()), m.LabelNames(), c.JSON)
	}
	return nil
}

// knownScheme reports a path no registered Beam file system handles (Beam's
// own check panics).
func knownScheme(path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: %v", path, r)
		}
	}()
	filesystem.ValidateScheme(path)
	return nil
}

// Match returns the files glob matches, with their sizes, sorted by name.
func Match(ctx context.Context, glob string) ([]fileio.FileMetadata, error) {
	fs, err := filesystem.New(ctx, glob)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	names, err := fs.List(ctx, glob)
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	out := make([]fileio.FileMetadata, len(names))
	for i, name := range names {
		size, err := fs.Size(ctx, name)
		if err != nil {
			return nil, err
		}
		out[i] = fileio.FileMetadata{Path: name, Size: size}
	}
	return out, nil
}

// tagBatch is tagged sequences of one region, numbered within it (see
// rawSeq), in order. The pipeline moves them in batches of about
// batchBytes of text: an element costs a runner microseconds whatever its
// size (Prism spent about 11 % of the CPU on one element per sequence,
// 25 µs a sequence of 23 tokens).
type tagBatch struct {
	File   string
	Region int64
	Locals []int64 // each sequence's index in the region
	Ends   []int32 // where each sequence's text ends in Text
	Text   []byte  // what simdcrf tag prints for each
	// With Evaluate: each sequence's number of items, and the labels and
	// reference labels of all of them, one sequence after the other.
	Items             []int32
	Labels, Reference []string
}

const batchBytes = 64 << 10

func (b *tagBatch) add(local int64, t tagged) {
	b.Locals = append(b.Locals, local)
	b.Text = append(b.Text, t.Text...)
	b.Ends = append(b.Ends, int32(len(b.Text)))
	if t.Labels != nil {
		b.Items = append(b.Items, int32(len(t.Labels)))
		b.Labels = append(b.Labels, t.Labels...)
		b.Reference = append(b.Reference, t.Reference...)
	}
}

// readTagFn reads the sequences of a byte range of a file and tags them.
type readTagFn struct {
	rangeFn
	tagger
}

func (fn *readTagFn) Setup(ctx context.Context) error {
	if _, err := fn.setup(ctx); err != nil {
		return err
	}
	// The model's unknown-word guesser is not in the Spec this DoFn was
	// serialised with (it is not JSON): take it from the model loaded.
	fn.rangeFn.Spec.Guesser = fn.l.m.Meta.Spec.Guesser
	return nil
}

func (fn *readTagFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, f fileio.ReadableFile,
	emit func(tagBatch), bad func(rawSeq), stat func(regionStat)) error {
	// The batches are emitted once the range is read. A runner splits a
	// range off to another worker when the one reading it looks stuck, and
	// Prism judges that by the outputs: a bundle that emits as it goes is
	// never split, and runs on one core however many there are. Held back,
	// a range's output (about half its input) is in memory until it is done.
	var (
		b   tagBatch
		out []tagBatch
	)
	flush := func() {
		if len(b.Locals) > 0 {
			out = append(out, b)
		}
		b = tagBatch{File: b.File, Region: b.Region}
	}
	err := fn.read(ctx, rt, f, func(r rawSeq, s *format.Sequence, _ []byte) {
		t := fn.tag(ctx, s)
		if t.Err != "" {
			r.Err, r.ErrLine = t.Err, int64(t.ErrLine-1) // s numbers lines from the region's first
			bad(r)
			return
		}
		b.File, b.Region = r.File, r.Region
		b.add(r.Local, t)
		if len(b.Text) >= batchBytes {
			flush()
		}
	}, bad, stat)
	flush()
	for _, b := range out {
		emit(b)
	}
	return err
}

// ShardName is the name of shard i of n: PREFIX-NNNNN-of-NNNNN.
func ShardName(prefix string, i, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d", prefix, i, n)
}

// write writes the tagged sequences to n shards in input order: a region
// starting at byte b of the files one after the other (of T bytes in all)
// goes to shard b·n/T, so that the shards are cut at region boundaries,
// about as large as one another, without knowing the regions beforehand.
// Each shard sorts its sequences and numbers them once every region is read.
func write(s beam.Scope, prefix string, n int, files []fileio.FileMetadata, tagged, stats beam.PCollection) {
	s = s.Scope("crfbeam.Write")
	filesystem.ValidateScheme(prefix)
	fn := &shardFn{Shards: n, Offsets: map[string]int64{}}
	for _, f := range files {
		fn.Offsets[f.Path] = fn.Total
		fn.Total += f.Size
	}
	// One empty item per shard, so that every shard is written.
	ids := make([]any, n)
	for i := range ids {
		ids[i] = i
	}
	keyed := beam.Flatten(s, beam.ParDo(s, fn, tagged), beam.ParDo(s, emptyShard, beam.Create(s, ids...)))
	beam.ParDo0(s, &writeShardFn{Prefix: prefix, Shards: n}, beam.GroupByKey(s, keyed), beam.SideInput{Input: stats})
}

func emptyShard(i int) (int, tagBatch) { return i, tagBatch{} }

// shardFn gives each tagged sequence its shard.
type shardFn struct {
	Shards  int
	Offsets map[string]int64 // bytes in the files before each
	Total   int64
}

func (fn *shardFn) ProcessElement(t tagBatch, emit func(int, tagBatch)) {
	k := 0
	if fn.Total > 0 {
		k = int(min((fn.Offsets[t.File]+t.Region)*int64(fn.Shards)/fn.Total, int64(fn.Shards-1)))
	}
	emit(k, t)
}

type writeShardFn struct {
	Prefix string
	Shards int
}

func (fn *writeShardFn) ProcessElement(ctx context.Context, shard int, batches func(*tagBatch) bool, stats func(*regionStat) bool) error {
	var all []tagBatch
	var b tagBatch
	for batches(&b) {
		if len(b.Locals) > 0 { // not the empty one
			all = append(all, b)
		}
	}
	slices.SortFunc(all, func(a, b tagBatch) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Region, b.Region), cmp.Compare(a.Locals[0], b.Locals[0]))
	})
	var rs regions
	if len(all) > 0 {
		rs = regionBases(stats)
	}
	return writeFile(ctx, ShardName(fn.Prefix, shard, fn.Shards), func(w *bufio.Writer) error {
		var head []byte
		for _, b := range all {
			base, err := rs.base(b.File, b.Region)
			if err != nil {
				return err
			}
			start := int32(0)
			for k, local := range b.Locals {
				head = append(head[:0], "#\t"...)
				head = append(head, b.File...)
				head = append(head, '\t')
				head = strconv.AppendInt(head, base.index+local, 10)
				head = append(head, '\n')
				w.Write(head)
				w.Write(b.Text[start:b.Ends[k]])
				start = b.Ends[k]
			}
		}
		return nil
	})
}
