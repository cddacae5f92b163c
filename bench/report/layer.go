package report

import (
	"bytes"
	"fmt"

	"github.com/simdcrf/simdcrf/bench/layerbench"
)

// WriteLayer writes the section on the CRF layer against PyTorch.
func WriteLayer(buf *bytes.Buffer, res []layerbench.Result, o layerbench.Options) {
	fmt.Fprintf(buf, "## CRF layer for neural taggers, against PyTorch\n\n")
	torch := ""
	for _, r := range res {
		if r.Torch != "" {
			torch = r.Torch
		}
	}
	if torch == "" {
		torch = "(not available on this run: simdcrf alone)"
	}
	fmt.Fprintf(buf, "`go run ./cmd/simdcrf-bench layer` (`--json` for JSON lines): package `layer` on a padded batch of B=%d sequences of T=%d "+
		"(lengths uniform in %d–%d) with emissions N(0, 2²) and transition, start and end scores N(0, 1), against a standard batched CRF layer "+
		"written in PyTorch %s on the CPU (bench/layerbench/torch_crf.py: a Python loop over time with a (B,M,M) broadcast and "+
		"logsumexp or max per step, the gradient by autograd, a batched backtrace; pytorch-crf's algorithm) on the same scores, "+
		"`torch.set_num_threads` and `CRF.Threads` set to the thread count. nll_grad is the summed NLL with the gradients of the emissions, transitions, start and end; "+
		"decode the Viterbi paths and scores; marginals P(y_t=j) and log Z (torch: autograd of log Z). Median ms per batch "+
		"(rounds taking turns: %d); × = torch ms / simdcrf ms. Agreement with torch of the same type at %d thread(s): "+
		"nll_grad, the largest relative difference of a sequence's NLL and of a gradient entry (relative to max(1, |entry|)); decode, labels that differ and the "+
		"relative difference of the scores; marginals, absolute and that of log Z.\n\n",
		layerbench.B, layerbench.T, layerbench.MinLen, layerbench.T, torch, o.Rounds, agreeThreads(o))
	fmt.Fprintf(buf, "| op | type | M | threads | simdcrf ms | simdcrf tokens/s | torch ms | torch tokens/s | × | agreement |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range res {
		fmt.Fprintf(buf, "| %s | %s | %d | %d | %.3f | %s | %s | %s | %s | %s |\n", r.Op, r.Type, r.Labels, r.Threads,
			r.SimdcrfMs, FormatRate(r.SimdcrfTokensS), optMs(r.TorchMs), optRate(r.TorchTokensS), optX(r.Speedup), Agreement(r))
	}
	fmt.Fprintf(buf, "\n")
	scaling := ""
	for _, r := range res {
		if r.Type != "float32" || r.Threads != 1 {
			continue
		}
		for _, q := range res {
			if q.Op == r.Op && q.Type == r.Type && q.Labels == r.Labels && q.Threads == 2 {
				scaling += fmt.Sprintf(" %s M=%d ×%.2f;", r.Op, r.Labels, r.SimdcrfMs/q.SimdcrfMs)
			}
		}
	}
	if scaling != "" {
		fmt.Fprintf(buf, "Two threads against one (simdcrf, float32):%s.\n\n", scaling[:len(scaling)-1])
	}
	// Torch's OpenMP threads spin while they wait; on a loaded machine two
	// of them can be much slower than one. Say so when it happened.
	slower, cases := 0, 0
	for _, r := range res {
		for _, q := range res {
			if r.Threads == 1 && q.Threads == 2 && q.Op == r.Op && q.Type == r.Type && q.Labels == r.Labels && r.TorchMs > 0 && q.TorchMs > 0 {
				cases++
				if q.TorchMs > r.TorchMs {
					slower++
				}
			}
		}
	}
	if slower > 0 {
		fmt.Fprintf(buf, "PyTorch with two threads was slower than with one in %d of %d cases here (its default OpenMP threads "+
			"spin-wait, and the machine's other load takes the second core); the targets compare one thread.\n\n", slower, cases)
	}
}

// Agreement is a result's agreement column.
func Agreement(r layerbench.Result) string {
	if !r.Compared {
		return ""
	}
	switch r.Op {
	case "nll_grad":
		return fmt.Sprintf("NLL %.1e, grad %.1e rel", r.MaxRel, r.MaxAbs)
	case "decode":
		return fmt.Sprintf("%d labels differ, score %.1e rel", r.Mismatch, r.MaxRel)
	}
	return fmt.Sprintf("marg %.1e, log Z %.1e rel", r.MaxAbs, r.MaxRel)
}

func optMs(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

func optRate(x float64) string {
	if x == 0 {
		return "–"
	}
	return FormatRate(x)
}

func optX(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", x)
}

// agreeThreads is the thread count whose results the agreement column
// compares: the first of o.Threads, or of layerbench's default list when
// o leaves it empty (as the report does).
func agreeThreads(o layerbench.Options) int {
	if len(o.Threads) > 0 {
		return o.Threads[0]
	}
	return layerbench.Threads[0]
}
