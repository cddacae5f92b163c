package crfbeam

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/simdcrf/simdcrf/eval"
)

func init() {
	register.DoFn3x1[context.Context, int, func(*DeadLetter) bool, error](&writeErrorsFn{})
	register.DoFn3x1[context.Context, int, func(*Evaluation) bool, error](&writeEvalFn{})
	register.Function1x1(failOn)
	register.Iter1[DeadLetter]()
	register.Iter1[Evaluation]()
}

// writeFile writes a file through Beam's file systems: on local disks to a
// temporary name first, renamed when complete, so that a failed worker
// leaves no half-written file under the name (object stores make an object
// appear only once it is whole).
func writeFile(ctx context.Context, path string, write func(*bufio.Writer) error) (err error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	local := !strings.Contains(path, "://")
	name := path
	if local {
		name = path + ".tmp"
	}
	f, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = write(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && local {
		err = filesystem.Rename(ctx, fs, name, path)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteErrors writes the dead letters to one file, path, a line each,
// FILE<TAB>LINE<TAB>INDEX<TAB>ERROR (line 0: the whole file), sorted by
// file, index and line; the file is written, empty, when there are none.
// The dead letters are held in memory to be sorted.
func WriteErrors(s beam.Scope, path string, dead beam.PCollection) {
	s = s.Scope("crfbeam.WriteErrors")
	filesystem.ValidateScheme(path)
	beam.ParDo0(s, &writeErrorsFn{Path: path}, beam.Create(s, 0), beam.SideInput{Input: dead})
}

type writeErrorsFn struct {
	Path string
}

func (fn *writeErrorsFn) ProcessElement(ctx context.Context, _ int, dead func(*DeadLetter) bool) error {
	var all []DeadLetter
	var d DeadLetter
	for dead(&d) {
		all = append(all, d)
	}
	slices.SortFunc(all, func(a, b DeadLetter) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Index, b.Index), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Error, b.Error))
	})
	oneLine := strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")
	return writeFile(ctx, fn.Path, func(w *bufio.Writer) error {
		for _, d := range all {
			fmt.Fprintf(w, "%s\t%d\t%d\t%s\n", d.File, d.Line, d.Index, oneLine.Replace(d.Error))
		}
		return nil
	})
}

// WriteEvaluation writes the evaluation (from Evaluate) to path as
// simdcrf tag -t prints it, or as the JSON object simdcrf tag --json prints;
// when there was nothing to evaluate, the evaluation of nothing. labels are
// the model's label names.
func WriteEvaluation(s beam.Scope, path string, ev beam.PCollection, labels []string, asJSON bool) {
	s = s.Scope("crfbeam.WriteEvaluation")
	filesystem.ValidateScheme(path)
	beam.ParDo0(s, &writeEvalFn{Path: path, Labels: labels, JSON: asJSON}, beam.Create(s, 0), beam.SideInput{Input: ev})
}

type writeEvalFn struct {
	Path   string
	Labels []string
	JSON   bool
}

func (fn *writeEvalFn) ProcessElement(ctx context.Context, _ int, evs func(*Evaluation) bool) error {
	ev := Evaluation{E: eval.NewEvaluator(fn.Labels)}
	var e Evaluation
	for n := 0; evs(&e); n++ {
		if n > 0 {
			return errors.New("crfbeam.WriteEvaluation: more than one evaluation")
		}
		ev = e
	}
	r := ev.Result()
	return writeFile(ctx, fn.Path, func(w *bufio.Writer) error {
		if fn.JSON {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			w.Write(b)
			return w.WriteByte('\n')
		}
		return r.WriteText(w)
	})
}

// FailOnError makes the pipeline fail at the first dead letter, with its
// place and problem in the error, after FailMark.
func FailOnError(s beam.Scope, dead beam.PCollection) {
	beam.ParDo0(s.Scope("crfbeam.FailOnError"), failOn, dead)
}

// FailMark starts the part of a pipeline's error that FailOnError wrote
// (runners wrap it in their own reports).
const FailMark = "malformed input: "

func failOn(d DeadLetter) error { return errors.New(FailMark + d.String()) }

// ReadFile reads a whole file through Beam's file systems.
func ReadFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
