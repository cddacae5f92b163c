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
	beam.RegisterType(reflect.TypeOf(rawTagged{}))
	register.DoFn6x1[context.Context, *sdf.LockRTracker, fileio.ReadableFile, func(rawTagged), func(rawSeq), func(regionStat), error](&readTagFn{})
	register.DoFn2x0[rawTagged, func(int, rawTagged)](&shardFn{})
	register.Function1x2(emptyShard)
	register.DoFn4x1[context.Context, int, func(*rawTagged) bool, func(*regionStat) bool, error](&writeShardFn{})
	register.Emitter1[rawTagged]()
	register.Emitter2[int, rawTagged]()
	register.Iter1[rawTagged]()
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
	spec, err := Spec(m, c.Format)
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

// rawTagged is a tagged sequence numbered within its region (see rawSeq).
type rawTagged struct {
	File              string
	Region, Local     int64
	Text              []byte
	Labels, Reference []string
}

// readTagFn reads the sequences of a byte range of a file and tags them.
type readTagFn struct {
	rangeFn
	tagger
}

func (fn *readTagFn) Setup(ctx context.Context) error {
	_, err := fn.setup(ctx)
	return err
}

func (fn *readTagFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, f fileio.ReadableFile,
	emit func(rawTagged), bad func(rawSeq), stat func(regionStat)) error {
	return fn.read(ctx, rt, f, func(r rawSeq, s *format.Sequence, _ []byte) {
		t := fn.tag(ctx, s)
		if t.Err != "" {
			r.Err, r.ErrLine = t.Err, int64(t.ErrLine-1) // s numbers lines from the region's first
			bad(r)
			return
		}
		emit(rawTagged{File: r.File, Region: r.Region, Local: r.Local, Text: t.Text, Labels: t.Labels, Reference: t.Reference})
	}, bad, stat)
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

func emptyShard(i int) (int, rawTagged) { return i, rawTagged{Local: -1} }

// shardFn gives each tagged sequence its shard.
type shardFn struct {
	Shards  int
	Offsets map[string]int64 // bytes in the files before each
	Total   int64
}

func (fn *shardFn) ProcessElement(t rawTagged, emit func(int, rawTagged)) {
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

func (fn *writeShardFn) ProcessElement(ctx context.Context, shard int, items func(*rawTagged) bool, stats func(*regionStat) bool) error {
	var all []rawTagged
	var t rawTagged
	for items(&t) {
		if t.Local >= 0 {
			all = append(all, t)
		}
	}
	slices.SortFunc(all, func(a, b rawTagged) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Region, b.Region), cmp.Compare(a.Local, b.Local))
	})
	var rs regions
	if len(all) > 0 {
		rs = regionBases(stats)
	}
	return writeFile(ctx, ShardName(fn.Prefix, shard, fn.Shards), func(w *bufio.Writer) error {
		var head []byte
		for _, t := range all {
			b, err := rs.base(t.File, t.Region)
			if err != nil {
				return err
			}
			head = append(head[:0], "#\t"...)
			head = append(head, t.File...)
			head = append(head, '\t')
			head = strconv.AppendInt(head, b.index+t.Local, 10)
			head = append(head, '\n')
			w.Write(head)
			w.Write(t.Text)
		}
		return nil
	})
}
