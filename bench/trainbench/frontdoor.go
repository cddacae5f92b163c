package trainbench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/simdcrf/simdcrf"
	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
)

// FrontResult is the Go API (package simdcrf) against the command on the
// same data and options, one thread each: training from sequences of
// items in memory (Trainer.Append and Train, appending included) against
// `simdcrf learn` on the same attributes as a CRFsuite file; tagging the
// test sequences through Tagger.Tag in process against `simdcrf tag` as a
// whole process (file to labels).
type FrontResult struct {
	Task       string
	Tokens     int // training tokens
	TestTokens int
	Iters      int
	Reps       int // runs of each, medians below
	LearnSec   float64
	TrainerSec float64 // Append and Train together
	AppendSec  float64 // of which Append
	// Tagging, tokens per second.
	CmdTagTokSec    float64
	TaggerTokSec    float64
	SameModelLabels bool // the Trainer's model tags the test file as the command's does
}

// MeasureFrontDoor measures the Go API against the command on the chunking
// task (CoNLL-2000 with chunking.tpl), reps runs of each training, taken in
// turns, and o.TagRepeats of each tagging. One thread: the command runs
// with GOMAXPROCS=1 and --threads 1, and the process runs its own part with
// GOMAXPROCS=1 and Options.Threads 1.
func MeasureFrontDoor(ctx context.Context, o Options, reps int) (FrontResult, error) {
	t := Tasks[slices.IndexFunc(Tasks, func(t Task) bool { return t.Name == "chunking" })]
	r := FrontResult{Task: t.Name, Reps: reps}
	if o.TagRepeats <= 0 {
		o.TagRepeats = DefaultTagRepeats
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	spec, err := t.spec(o)
	if err != nil {
		return r, err
	}
	trainPath, testPath := filepath.Join(o.DataDir, t.Train[0]), filepath.Join(o.DataDir, t.Test)
	trainAttr := filepath.Join(o.WorkDir, "frontdoor.train.crfsuite")
	testAttr := filepath.Join(o.WorkDir, "frontdoor.test.crfsuite")
	if _, _, err := writeAttrs([]string{trainPath}, spec, trainAttr); err != nil {
		return r, err
	}
	if _, _, err := writeAttrs([]string{testPath}, spec, testAttr); err != nil {
		return r, err
	}
	trainX, trainY, err := readItems(trainPath, spec)
	if err != nil {
		return r, err
	}
	testX, _, err := readItems(testPath, spec)
	if err != nil {
		return r, err
	}
	for _, x := range trainX {
		r.Tokens += len(x)
	}
	for _, x := range testX {
		r.TestTokens += len(x)
	}

	cmdModel := filepath.Join(o.WorkDir, "frontdoor.model")
	var learn, trainer, appends []float64
	var m *simdcrf.Model
	for i := range reps {
		o.Progress(fmt.Sprintf("front door: simdcrf learn, run %d of %d", i+1, reps))
		args := []string{"learn", "-q", "--threads", "1", "-m", cmdModel}
		if o.MaxIterCheck > 0 {
			args = append(args, "-p", fmt.Sprintf("max_iterations=%d", o.MaxIterCheck))
		}
		wall, _, _, err := runChild(ctx, o.Exe, append(args, trainAttr), nil, 1)
		if err != nil {
			return r, err
		}
		learn = append(learn, wall)
		o.Progress(fmt.Sprintf("front door: Trainer, run %d of %d", i+1, reps))
		var app float64
		wall, m, app, err = trainInProcess(ctx, trainX, trainY, o.MaxIterCheck)
		if err != nil {
			return r, err
		}
		trainer, appends = append(trainer, wall), append(appends, app)
	}
	r.LearnSec, r.TrainerSec, r.AppendSec = median(learn), median(trainer), median(appends)
	meta, err := model.Load(cmdModel)
	if err != nil {
		return r, err
	}
	r.Iters = meta.Meta.Stats.Iterations

	// Tagging: the command's model, by the command and by a Tagger.
	var cmdTag, tagger []float64
	var cmdOut strings.Builder
	cm, err := simdcrf.Load(cmdModel)
	if err != nil {
		return r, err
	}
	for i := range o.TagRepeats {
		o.Progress(fmt.Sprintf("front door: tagging, run %d of %d", i+1, o.TagRepeats))
		var out io.Writer
		if i == 0 {
			out = &cmdOut
		}
		wall, _, _, err := runChild(ctx, o.Exe, []string{"tag", "--threads", "1", "-m", cmdModel, testAttr}, out, 1)
		if err != nil {
			return r, err
		}
		cmdTag = append(cmdTag, wall)
		wall, err = tagInProcess(cm.Tagger(), testX)
		if err != nil {
			return r, err
		}
		tagger = append(tagger, wall)
	}
	r.CmdTagTokSec = float64(r.TestTokens) / median(cmdTag)
	r.TaggerTokSec = float64(r.TestTokens) / median(tagger)

	// The Trainer's model labels the test set as the command does.
	var got strings.Builder
	for _, x := range testX {
		y, err := m.Tagger().Tag(x)
		if err != nil {
			return r, err
		}
		for _, l := range y {
			got.WriteString(l + "\n")
		}
		got.WriteString("\n")
	}
	r.SameModelLabels = got.String() == cmdOut.String()
	return r, nil
}

// readItems reads a file's sequences as items and labels.
func readItems(path string, spec format.Spec) ([][]simdcrf.Item, [][]string, error) {
	f, err := corpus.Open(path, spec)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var xs [][]simdcrf.Item
	var ys [][]string
	var s format.Sequence
	for {
		err := f.Read(&s)
		if err == io.EOF {
			return xs, ys, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if s.Len() == 0 {
			continue
		}
		x := make([]simdcrf.Item, s.Len())
		y := make([]string, s.Len())
		for t := range s.Len() {
			it := make(simdcrf.Item, 0, s.Ptr[t+1]-s.Ptr[t])
			for k := s.Ptr[t]; k < s.Ptr[t+1]; k++ {
				it = append(it, simdcrf.Attribute{Name: string(s.Names[k]), Value: s.Values[k]})
			}
			x[t], y[t] = it, string(s.Labels[t])
		}
		xs, ys = append(xs, x), append(ys, y)
	}
}

// oneCore runs f with GOMAXPROCS=1, as the command's one-thread runs.
func oneCore[T any](f func() (T, error)) (T, error) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	runtime.GC()
	return f()
}

// trainInProcess trains through the front door, one thread, and returns
// the wall time of Append and Train together, the model and the time of
// the Appends.
func trainInProcess(ctx context.Context, xs [][]simdcrf.Item, ys [][]string, maxIter int) (float64, *simdcrf.Model, float64, error) {
	type res struct {
		wall, app float64
		m         *simdcrf.Model
	}
	r, err := oneCore(func() (res, error) {
		start := time.Now()
		opts := simdcrf.Options{Threads: 1}
		if maxIter > 0 {
			opts.Params = map[string]string{"max_iterations": fmt.Sprint(maxIter)}
		}
		tr, err := simdcrf.NewTrainer(opts)
		if err != nil {
			return res{}, err
		}
		for i := range xs {
			if err := tr.Append(xs[i], ys[i]); err != nil {
				return res{}, err
			}
		}
		app := time.Since(start).Seconds()
		m, err := tr.Train(ctx)
		return res{time.Since(start).Seconds(), app, m}, err
	})
	return r.wall, r.m, r.app, err
}

// tagInProcess tags every sequence with g on one core and returns the wall
// time.
func tagInProcess(g *simdcrf.Tagger, xs [][]simdcrf.Item) (float64, error) {
	return oneCore(func() (float64, error) {
		start := time.Now()
		for _, x := range xs {
			if _, err := g.Tag(x); err != nil {
				return 0, err
			}
		}
		return time.Since(start).Seconds(), nil
	})
}
