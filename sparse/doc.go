// Package sparse holds what turns a feature-based linear-chain CRF into the
// emission scores package engine works on: attribute dictionaries (Dict),
// sequences of sparse attribute vectors in compact CSR form (Seq, Builder,
// Corpus), and the state weights (attribute × label) in two layouts behind
// one interface (Weights):
//
//   - DenseRows (Dense): a weight for every (attribute, label) pair, rows of
//     M weights gathered and scattered by the SIMD kernels of package
//     kernels, one call per sequence. This is CRFsuite's
//     feature.possible_states=1.
//   - SparseRows (Sparse): per attribute only the labels it was seen with in
//     training (a Pattern), for label sets in the hundreds or thousands,
//     where a dense row would be mostly zeros and touch far more memory.
//
// ChooseLayout picks one by size. Both are views on a caller-owned
// parameter vector (state weights first; an optimiser owns the vector), and
// give the scores (Score), the expected feature counts (AddGradient, from the
// marginals engine computes) and the observed ones (AddObserved).
//
// Scoring sparse features is bound by memory, not arithmetic: every feature
// fetches a weight row from wherever it lies, ≈ 11 ns per cache line missed.
// Hence the lean layouts, and Dict.Reorder with FrequencyOrder, which gives
// frequent attributes small ids so that their rows share cache lines and
// pages.
package sparse
