package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/simdcrf/simdcrf/corpus"
	"github.com/simdcrf/simdcrf/eval"
	"github.com/simdcrf/simdcrf/format"
	"github.com/simdcrf/simdcrf/model"
	"github.com/simdcrf/simdcrf/sparse"
)

const tagSynopsis = "tag -m MODEL [--format crfsuite|conll|conllu] [-t] [--json] [-r] [-p] [-i] [-l] [-n K] [-q] [--threads N] [DATA...]"

// tagOptions are what tag prints and how it runs.
type tagOptions struct {
	evaluate bool // -t: score against the labels in the data
	asJSON   bool // --json: the evaluation as one JSON object
	quiet    bool // -q: no labels
	text     model.TextOptions
	threads  int
}

// tagHelp follows the options in tag -h.
const tagHelp = `
The options are crfsuite tag's, with its output: -r puts the reference
label and a TAB before each predicted label; -p prints "@score<TAB>S<TAB>L"
(S the labelling's score, L = log Z) and "@probability<TAB>P" before each
sequence; -i appends ":M", the chosen label's marginal probability; -l
appends "<TAB>LABEL:M" for every label in model order (numbers as C's
%f). With -n K each of the K best labellings prints as a sequence does
without -n, after a line "@nbest<TAB>RANK<TAB>P": -p gives its own score
and probability, -i and -l the marginals of its labels. The long forms
--model, --test, --reference, --probability, --marginal, --marginal-all
and --quiet are accepted too. Without DATA (or with -) tag reads standard
input. --label, --template and --features may be given when they are what
the model was trained with.
`

func cmdTag(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tag", tagSynopsis, stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: simdcrf %s\n\noptions:\n", tagSynopsis)
		// The long forms are listed in tagHelp, not one by one.
		short := flag.NewFlagSet("tag", flag.ContinueOnError)
		short.SetOutput(stderr)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.HasPrefix(f.Usage, "same as -") {
				short.Var(f.Value, f.Name, f.Usage)
			}
		})
		short.PrintDefaults()
		io.WriteString(stderr, tagHelp)
	}
	var modelPath string
	fs.StringVar(&modelPath, "m", "", "the model `FILE` (required): simdcrf's or CRFsuite's format")
	formatName := fs.String("format", "", "input format (default: the one the model was trained on)")
	var o tagOptions
	fs.BoolVar(&o.evaluate, "t", false, "evaluate against the labels in DATA: per-label precision, recall and F1, item and instance accuracy, chunk F1")
	fs.BoolVar(&o.asJSON, "json", false, "print the evaluation as one JSON object (implies -t and -q)")
	fs.BoolVar(&o.text.Reference, "r", false, "print the reference label and a TAB before each predicted label")
	fs.BoolVar(&o.quiet, "q", false, "print no labels (with -t: only the evaluation)")
	fs.BoolVar(&o.text.Prob, "p", false, "print each labelling's score and probability ('@score\\tS\\tlogZ', '@probability\\tP') before it")
	fs.BoolVar(&o.text.Marginals, "i", false, "print the marginal probability of each chosen label ('LABEL:P')")
	fs.BoolVar(&o.text.AllMarginals, "l", false, "print the marginal probability of every label after the chosen one ('\\tLABEL:P' each, in model order)")
	fs.IntVar(&o.text.NBest, "n", 0, "print the `K` best labellings of each sequence, each after a line '@nbest\\tRANK\\tP'")
	fs.IntVar(&o.threads, "threads", 0, "tagging threads (0: all cores)")
	sf := specFlags{
		template: fs.String("template", "", "the CRF++ template `FILE` the model was trained with (checked, not needed: the model holds it)"),
		features: fs.String("features", "", "the built-in feature `SET` the model was trained with (checked, not needed)"),
		label:    fs.String("label", "", "the conllu label column the model was trained on (checked, not needed)"),
	}
	// crfsuite tag's long forms.
	fs.StringVar(&modelPath, "model", "", "same as -m")
	fs.BoolVar(&o.evaluate, "test", false, "same as -t")
	fs.BoolVar(&o.text.Reference, "reference", false, "same as -r")
	fs.BoolVar(&o.text.Prob, "probability", false, "same as -p")
	fs.BoolVar(&o.text.Marginals, "marginal", false, "same as -i")
	fs.BoolVar(&o.text.AllMarginals, "marginal-all", false, "same as -l")
	fs.BoolVar(&o.quiet, "quiet", false, "same as -q")
	if err := parse(fs, args); err != nil {
		return err
	}
	if modelPath == "" {
		fs.Usage()
		return errUsage
	}
	data := fs.Args()
	if len(data) == 0 {
		data = []string{"-"} // as crfsuite tag: standard input
	}
	var nSet bool
	fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
	if nSet && o.text.NBest < 1 {
		return fmt.Errorf("-n %d: want K ≥ 1 (the number of best labellings to print)", o.text.NBest)
	}
	if o.threads < 0 {
		return fmt.Errorf("--threads %d: want N ≥ 1, or 0 for all cores", o.threads)
	}
	if o.asJSON {
		o.evaluate, o.quiet = true, true
	}
	// Mapped, not read: one run loads the model once (see model.Map).
	m, unmap, err := model.Map(modelPath)
	if err != nil {
		return err
	}
	defer unmap()
	sf.format = formatName
	given, err := sf.spec()
	if err != nil {
		return err
	}
	spec, err := m.Meta.Spec.ForTagging(given)
	if err != nil {
		return fmt.Errorf("%s: %w", modelPath, err)
	}
	var files []*corpus.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, path := range data {
		f, err := corpus.Open(path, spec)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	res, err := tagFiles(m, files, o, stdout)
	if err != nil {
		return err
	}
	if o.evaluate {
		return writeEval(stdout, res, o.asJSON)
	}
	return nil
}

func writeEval(w io.Writer, r eval.Result, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	return r.WriteText(w)
}

// A tagBatch is a run of sequences read, encoded, tagged and printed
// together; batches are recycled so that tagging allocates nothing in
// steady state.
type tagBatch struct {
	seq     int // batch number, for printing in order
	ptr     []int32
	ids     []int32
	vals    []float64
	hasVals bool
	bptr    []int32 // bigram attributes (observation-dependent transitions)
	bids    []int32
	seqs    []batchSeq
	gold    []string // gold labels (interned), per position
	pred    []int32  // best labels, per position
	cands   []int32  // lexicon entries, per position (models with candidate labels)
	out     []byte   // the printed labels
	err     error
}

type batchSeq struct {
	p0, f0, t0, n int // offsets into ptr, ids/vals, gold/pred; positions
	bp0, bf0      int // offsets into bptr, bids (bp0 < 0: none)
	file          string
	line          int
}

func (b *tagBatch) reset(n int) {
	b.seq = n
	b.ptr, b.ids, b.vals, b.seqs = b.ptr[:0], b.ids[:0], b.vals[:0], b.seqs[:0]
	b.bptr, b.bids = b.bptr[:0], b.bids[:0]
	b.gold, b.pred, b.out, b.err = b.gold[:0], b.pred[:0], b.out[:0], nil
	b.cands = b.cands[:0]
	b.hasVals = false
}

// add appends an encoded sequence (copied) and its gold labels.
func (b *tagBatch) add(e model.Encoded, gold []string, file string, line int) {
	s, big, cands := e.Seq, e.Bigrams, e.Candidates
	bs := batchSeq{p0: len(b.ptr), f0: len(b.ids), t0: len(b.pred), n: s.Len(), bp0: -1, file: file, line: line}
	if big.NumFeatures() > 0 {
		bs.bp0, bs.bf0 = len(b.bptr), len(b.bids)
		b.bptr = append(b.bptr, big.Ptr...)
		b.bids = append(b.bids, big.IDs...)
	}
	b.ptr = append(b.ptr, s.Ptr...)
	b.ids = append(b.ids, s.IDs...)
	if s.Vals != nil {
		if !b.hasVals {
			for range len(b.ids) - len(s.IDs) - len(b.vals) {
				b.vals = append(b.vals, 1)
			}
			b.hasVals = true
		}
		b.vals = append(b.vals, s.Vals...)
	} else if b.hasVals {
		for range s.IDs {
			b.vals = append(b.vals, 1)
		}
	}
	b.gold = append(b.gold, gold...)
	b.cands = append(b.cands, cands...)
	for range s.Len() {
		b.pred = append(b.pred, 0)
	}
	b.seqs = append(b.seqs, bs)
}

// get returns sequence i of the batch.
func (b *tagBatch) get(i int) model.Encoded {
	bs := b.seqs[i]
	ptr := b.ptr[bs.p0 : bs.p0+bs.n+1]
	nf := int(ptr[bs.n])
	e := model.Encoded{Seq: sparse.Seq{Ptr: ptr, IDs: b.ids[bs.f0 : bs.f0+nf]}}
	if b.hasVals {
		e.Seq.Vals = b.vals[bs.f0 : bs.f0+nf]
	}
	if bs.bp0 >= 0 {
		ptr := b.bptr[bs.bp0 : bs.bp0+bs.n+1]
		e.Bigrams = sparse.Seq{Ptr: ptr, IDs: b.bids[bs.bf0 : bs.bf0+int(ptr[bs.n])]}
	}
	if len(b.cands) > 0 {
		e.Candidates = b.cands[bs.t0 : bs.t0+bs.n]
	}
	return e
}

const batchItems = 4096 // positions per batch

// testHookTagger, when a test sets it, runs once tagFiles has its tagger.
var testHookTagger func()

// guardModel, deferred as "defer guardModel(m, &err)()" at the top of a
// goroutine that reads m, turns a fault on m's mapped file (truncated or
// rewritten in place while tagging: see model.Map) into an error in *err
// instead of a crash; other panics go on.
func guardModel(m *model.Model, err *error) func() {
	old := debug.SetPanicOnFault(true)
	return func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			e := m.FaultError(r)
			if e == nil {
				panic(r)
			}
			*err = e
		}
	}
}

// tagFiles tags every sequence of files on o.threads goroutines, prints the
// labels in input order, and evaluates them when o.evaluate.
func tagFiles(m *model.Model, files []*corpus.File, o tagOptions, stdout io.Writer) (res eval.Result, err error) {
	defer guardModel(m, &err)()
	threads := o.threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	tagger := m.NewTagger()
	if testHookTagger != nil {
		testHookTagger()
	}
	labelNames := make([]string, m.Labels.Len())
	for i := range labelNames {
		labelNames[i] = m.Labels.String(int32(i))
	}

	free := make(chan *tagBatch, 2*threads+2)
	for range cap(free) {
		// Sized for typical items (up to 32 features), so that the
		// first batches do not grow step by step.
		free <- &tagBatch{ptr: make([]int32, 0, batchItems+256), ids: make([]int32, 0, 32*batchItems),
			pred: make([]int32, 0, batchItems+256), gold: make([]string, 0, batchItems+256)}
	}
	jobs := make(chan *tagBatch, cap(free))
	done := make(chan *tagBatch, cap(free))
	stop := make(chan struct{})
	var readErr error

	// Reader: parse, encode, batch.
	go func() {
		defer close(jobs)
		defer guardModel(m, &readErr)()
		var (
			seq     format.Sequence
			enc     = m.NewEncoder()
			intern  = map[string]string{}
			gold    []string
			batch   *tagBatch
			nbatch  int
			getFree = func() bool {
				select {
				case batch = <-free:
					batch.reset(nbatch)
					nbatch++
					return true
				case <-stop:
					return false
				}
			}
		)
		for _, name := range labelNames {
			intern[name] = name
		}
		if !getFree() {
			return
		}
		for _, f := range files {
			for {
				err := f.Read(&seq)
				if err == io.EOF {
					break
				}
				if err != nil {
					readErr = err
					return
				}
				if seq.Len() == 0 {
					continue
				}
				gold = gold[:0]
				if o.evaluate || o.text.Reference {
					if seq.Labels == nil {
						what := "no labels to evaluate against (-t)"
						if !o.evaluate {
							what = "no reference labels to print (-r)"
						}
						readErr = &format.Error{File: seq.File, Line: seq.Line, Msg: what}
						return
					}
					for _, l := range seq.Labels {
						g, ok := intern[string(l)] // no allocation: the compiler avoids it for lookups
						if !ok {
							g = string(l)
							intern[g] = g
						}
						gold = append(gold, g)
					}
				}
				batch.add(enc.Encode(&seq), gold, seq.File, seq.Line)
				if len(batch.pred) >= batchItems {
					jobs <- batch
					if !getFree() {
						return
					}
				}
			}
		}
		jobs <- batch
	}()

	// Workers: tag a batch, print its labels into the batch.
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out model.Output
			for batch := range jobs {
				func() {
					defer guardModel(m, &batch.err)()
					batch.err = tagBatchSeqs(tagger, batch, o, &out)
				}()
				done <- batch
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	// Writer: in input order.
	w := bufio.NewWriterSize(stdout, 1<<16)
	var (
		ev      = eval.NewEvaluator(labelNames)
		pending = map[int]*tagBatch{}
		next    = 0
		pred    []string
	)
	for batch := range done {
		pending[batch.seq] = batch
		for {
			b, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if err == nil {
				err = b.err
			}
			if err == nil && !o.quiet {
				_, err = w.Write(b.out)
			}
			if err == nil && o.evaluate {
				for _, bs := range b.seqs {
					pred = pred[:0]
					for _, y := range b.pred[bs.t0 : bs.t0+bs.n] {
						pred = append(pred, labelNames[y])
					}
					ev.Add(b.gold[bs.t0:bs.t0+bs.n], pred)
				}
			}
			if err != nil {
				select {
				case <-stop:
				default:
					close(stop)
				}
			}
			free <- b
		}
	}
	if err == nil {
		err = readErr
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return eval.Result{}, err
	}
	return ev.Result(), nil
}

// tagBatchSeqs tags the sequences of a batch and prints them into b.out
// (model.Tagger.TagText: what a sequence prints is defined there).
func tagBatchSeqs(tg *model.Tagger, b *tagBatch, o tagOptions, out *model.Output) error {
	text := o.text
	text.Quiet = o.quiet
	for i, bs := range b.seqs {
		var ref []string
		if o.text.Reference {
			ref = b.gold[bs.t0 : bs.t0+bs.n]
		}
		var err error
		if b.out, err = tg.TagText(b.out, out, b.get(i), ref, text); err != nil {
			return seqError(bs, err)
		}
		copy(b.pred[bs.t0:bs.t0+bs.n], out.Labels)
	}
	return nil
}

func seqError(bs batchSeq, err error) error {
	var fe *format.Error
	if errors.As(err, &fe) {
		return err
	}
	return &format.Error{File: bs.file, Line: bs.line, Msg: err.Error()}
}
