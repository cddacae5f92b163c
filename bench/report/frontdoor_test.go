package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/simdcrf/simdcrf/bench/trainbench"
)

func TestWriteFrontDoor(t *testing.T) {
	for _, c := range []struct {
		r    trainbench.FrontResult
		want []string
	}{
		{trainbench.FrontResult{Tokens: 211727, TestTokens: 47377, Iters: 150, Reps: 3, LearnSec: 20, TrainerSec: 22, AppendSec: 1.5,
			CmdTagTokSec: 300e3, TaggerTokSec: 450e3, SameModelLabels: true},
			[]string{"| training, wall s (Append 1.50 s of it) | 20.00 | 22.00 | ×1.10 | ≤ ×1.25 | yes |", "| ×1.50 | ≥ ×1.00 | yes |", "label the test file alike: yes"}},
		{trainbench.FrontResult{LearnSec: 20, TrainerSec: 30, CmdTagTokSec: 300e3, TaggerTokSec: 150e3},
			[]string{"| ×1.50 | ≤ ×1.25 | **no** |", "| ×0.50 | ≥ ×1.00 | **no** |", "alike: **no**"}},
	} {
		var buf bytes.Buffer
		WriteFrontDoor(&buf, c.r)
		for _, w := range c.want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("no %q in\n%s", w, buf.String())
			}
		}
	}
}
