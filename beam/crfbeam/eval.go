package crfbeam

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/simdcrf/simdcrf/eval"
)

func init() {
	beam.RegisterCoder(reflect.TypeOf(evalAcc{}), encodeAcc, decodeAcc)
	beam.RegisterCoder(reflect.TypeOf(Evaluation{}), encodeEvaluation, decodeEvaluation)
	register.Combiner3[evalAcc, tagBatch, Evaluation](&evalFn{})
	register.Function1x1(evalItem)
}

// Evaluation is what Evaluate computes: the counts of one evaluator given
// every sequence in order of (file, index).
type Evaluation struct {
	E *eval.Evaluator
}

// Result returns the scores, as simdcrf tag -t prints them
// (eval.Result.WriteText) or --json does (json.Marshal).
func (e Evaluation) Result() eval.Result { return e.E.Result() }

// Evaluate scores tagged sequences (from Tag with TagOptions.Evaluate)
// against their reference labels, combining per-worker counts, into one
// Evaluation equal to what simdcrf tag -t computes on the same files:
// labels is the model's label names (model.Model.LabelNames), reported
// first, and other reference labels follow in order of first occurrence
// in (file, index) order. The result has one element, or none when tagged
// is empty.
func Evaluate(s beam.Scope, tagged beam.PCollection, labels []string) beam.PCollection {
	s = s.Scope("crfbeam.Evaluate")
	return evaluate(s, beam.ParDo(s, evalItem, tagged), labels)
}

// evaluate is Evaluate for sequences numbered within regions, whose order
// (file, region, index in the region) is that of (file, index).
func evaluate(s beam.Scope, tagged beam.PCollection, labels []string) beam.PCollection {
	return beam.Combine(s, &evalFn{Labels: labels}, tagged)
}

func evalItem(t Tagged) tagBatch {
	return tagBatch{File: t.File, Locals: []int64{t.Index}, Items: []int32{int32(len(t.Labels))}, Labels: t.Labels, Reference: t.Reference}
}

// evalFn is the CombineFn of Evaluate.
type evalFn struct {
	Labels []string

	known map[string]bool
}

// evalAcc is an evaluator with, for each reference label the model does
// not have, where it first occurs: accumulators are merged in any order,
// but simdcrf tag reports such labels in order of first occurrence.
type evalAcc struct {
	ev    *eval.Evaluator
	first map[string]place
}

// place is a position in the input: file, region, sequence in the region,
// item.
type place struct {
	file          string
	region, local int64
	item          int
}

func (p place) cmp(q place) int {
	return cmp.Or(cmp.Compare(p.file, q.file), cmp.Compare(p.region, q.region), cmp.Compare(p.local, q.local), cmp.Compare(p.item, q.item))
}

func (fn *evalFn) CreateAccumulator() evalAcc {
	return evalAcc{ev: eval.NewEvaluator(fn.Labels), first: map[string]place{}}
}

func (fn *evalFn) AddInput(a evalAcc, b tagBatch) (evalAcc, error) {
	if len(b.Items) != len(b.Locals) || len(b.Labels) != len(b.Reference) {
		return a, fmt.Errorf("crfbeam.Evaluate: sequences of %s without their labels and reference labels (Tag with TagOptions.Evaluate)", b.File)
	}
	if fn.known == nil {
		fn.known = map[string]bool{}
		for _, l := range fn.Labels {
			fn.known[l] = true
		}
	}
	off := 0
	for k, n := range b.Items {
		if n == 0 || off+int(n) > len(b.Labels) {
			return a, fmt.Errorf("crfbeam.Evaluate: a sequence of %s has %d labels", b.File, n)
		}
		ref := b.Reference[off : off+int(n)]
		a.ev.Add(ref, b.Labels[off:off+int(n)])
		for i, l := range ref {
			if fn.known[l] {
				continue
			}
			p := place{b.File, b.Region, b.Locals[k], i}
			if q, ok := a.first[l]; !ok || p.cmp(q) < 0 {
				a.first[l] = p
			}
		}
		off += int(n)
	}
	return a, nil
}

func (fn *evalFn) MergeAccumulators(a, b evalAcc) evalAcc {
	a.ev.Merge(b.ev)
	for l, p := range b.first {
		if q, ok := a.first[l]; !ok || p.cmp(q) < 0 {
			a.first[l] = p
		}
	}
	return a
}

func (fn *evalFn) ExtractOutput(a evalAcc) Evaluation {
	extra := make([]string, 0, len(a.first))
	for l := range a.first {
		extra = append(extra, l)
	}
	slices.SortFunc(extra, func(x, y string) int { return a.first[x].cmp(a.first[y]) })
	e := eval.NewEvaluator(append(slices.Clip(fn.Labels), extra...))
	e.Merge(a.ev)
	return Evaluation{E: e}
}

// The coders: the evaluator's own encoding, and the first places.

func encodeAcc(a evalAcc) ([]byte, error) {
	b, err := a.ev.MarshalBinary()
	if err != nil {
		return nil, err
	}
	out := binary.AppendUvarint(nil, uint64(len(b)))
	out = append(out, b...)
	keys := make([]string, 0, len(a.first))
	for l := range a.first {
		keys = append(keys, l)
	}
	slices.Sort(keys)
	out = binary.AppendUvarint(out, uint64(len(keys)))
	for _, l := range keys {
		p := a.first[l]
		out = appendString(out, l)
		out = appendString(out, p.file)
		out = binary.AppendVarint(out, p.region)
		out = binary.AppendVarint(out, p.local)
		out = binary.AppendVarint(out, int64(p.item))
	}
	return out, nil
}

func decodeAcc(b []byte) (evalAcc, error) {
	d := decoder{b: b}
	a := evalAcc{ev: &eval.Evaluator{}, first: map[string]place{}}
	enc := d.bytes()
	n := d.uvarint()
	if n > uint64(len(d.b)) { // each entry takes bytes
		d.fail()
		n = 0
	}
	for range n {
		l, f := d.string(), d.string()
		a.first[l] = place{file: f, region: d.varint(), local: d.varint(), item: int(d.varint())}
	}
	if d.err != nil {
		return a, d.err
	}
	return a, a.ev.UnmarshalBinary(enc)
}

func encodeEvaluation(e Evaluation) ([]byte, error) { return e.E.MarshalBinary() }

func decodeEvaluation(b []byte) (Evaluation, error) {
	e := Evaluation{E: &eval.Evaluator{}}
	return e, e.E.UnmarshalBinary(b)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errShort = errors.New("crfbeam: truncated encoding")

// decoder reads what the encoders wrote, keeping the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string { return string(d.bytes()) }

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errShort
	}
	d.b = nil
}
