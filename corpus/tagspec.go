package corpus

import (
	"fmt"
	"strings"

	"github.com/simdcrf/simdcrf/format"
)

// ForTagging returns how to read tagging input for a model trained with s
// (the Spec its metadata holds), checking the input options a tagging
// command was given, in g (empty fields: not given; g.Template is the
// template's text, g.TemplateName its file). --label, --features and
// --template are accepted when they are the model's, with an error naming
// the difference otherwise; a --format other than the model's only when the
// model reads attributes as they are (no template or feature set). simdcrf
// tag and the pipeline command share it, so that both read input alike.
func (s Spec) ForTagging(g Spec) (Spec, error) {
	if l := g.Label; l != "" {
		have := s.Label
		if have == "" && s.Format == "conllu" {
			have = "upos"
		}
		if l != have {
			if have == "" {
				return s, fmt.Errorf("--label %s: the model reads %s input, not conllu labels", l, orCRFsuite(s.Format))
			}
			return s, fmt.Errorf("--label %s: the model was trained on the %s column", l, have)
		}
	}
	if f := g.Features; f != "" && f != s.Features {
		if s.Features == "" {
			return s, fmt.Errorf("--features %s: the model was trained without a built-in feature set (%s)", f, s.origin())
		}
		return s, fmt.Errorf("--features %s: the model was trained with --features %s", f, s.Features)
	}
	if g.Template != "" || g.TemplateName != "" {
		path := g.TemplateName
		given, err := format.ParseTemplate(strings.NewReader(g.Template), path)
		if err != nil {
			return s, err
		}
		if s.Template == "" {
			return s, fmt.Errorf("--template %s: the model was trained without a template (%s)", path, s.origin())
		}
		have, err := format.ParseTemplate(strings.NewReader(s.Template), "the model's template")
		if err != nil {
			return s, err
		}
		if given.String() != have.String() {
			return s, fmt.Errorf("--template %s: not the template the model was trained with (simdcrf dump shows it)", path)
		}
	}
	if g.Format != "" && g.Format != s.Format {
		if s.Template != "" || s.Features != "" {
			return s, fmt.Errorf("the model extracts its features from %s input (--format %s cannot be used with it)", s.Format, g.Format)
		}
		s.Format = g.Format
	}
	return s, nil
}

// origin says where the attributes of a model trained with s come from.
func (s Spec) origin() string {
	switch {
	case s.Template != "":
		return "it has a template"
	case s.Features != "":
		return "it has --features " + s.Features
	}
	return "it reads attributes from " + orCRFsuite(s.Format) + " input"
}

func orCRFsuite(f string) string {
	if f == "" {
		return "crfsuite"
	}
	return f
}
