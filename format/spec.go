package format

import (
	"errors"
	"fmt"
	"strings"
)

// Spec says how text becomes attributes: the file format and the feature
// extraction. A model stores its Spec (model.Meta embeds it, with these JSON
// names), so that tagging extracts exactly the features training did.
type Spec struct {
	Format   string `json:"format,omitempty"`   // "crfsuite", "conll" or "conllu"
	Template string `json:"template,omitempty"` // CRF++ template text, for conll and conllu
	// TemplateName names the template in error messages (its file; a
	// model's stored template: "template"). Not stored.
	TemplateName string `json:"-"`
	Features     string `json:"features,omitempty"` // a built-in feature set ("pos", "morph"), for conll and conllu
	Label        string `json:"label,omitempty"`    // conllu: "upos" or "xpos"
	Columns      int    `json:"columns,omitempty"`  // conll: observation columns (0: the last column is the label)
	// Guesser, with Features, adds its guesses of the words' labels to
	// the attributes (Options.Guesser). A model stores it in a section of
	// its own, not in the metadata's JSON.
	Guesser *Guesser `json:"-"`
}

// Resolve fills in the format when it was not given: "conllu" for files
// named *.conllu[.gz], "conll" when a template or feature set is given, and
// CRFsuite's attribute format otherwise (as crfsuite itself reads).
func (s Spec) Resolve(path string) Spec {
	if s.Format != "" {
		return s
	}
	p := strings.TrimSuffix(path, ".gz")
	switch {
	case strings.HasSuffix(p, ".conllu"):
		s.Format = "conllu"
	case s.Template != "" || s.Features != "":
		s.Format = "conll"
	default:
		s.Format = "crfsuite"
	}
	return s
}

// Validate reports a Spec that cannot work.
func (s Spec) Validate() error {
	switch s.Format {
	case "crfsuite":
		if s.Template != "" || s.Features != "" {
			return errors.New("a template or feature set needs column input (--format conll or conllu), not crfsuite's attribute format")
		}
	case "conll", "conllu":
		if s.Template == "" && s.Features == "" {
			return fmt.Errorf("%s input needs a feature template (--template FILE) or a feature set (--features pos)", s.Format)
		}
		if s.Template != "" && s.Features != "" {
			return errors.New("give a template or a feature set, not both")
		}
	default:
		return fmt.Errorf("unknown format %q (want crfsuite, conll or conllu)", s.Format)
	}
	if s.Label != "" && s.Format != "conllu" {
		return errors.New("--label is for conllu input")
	}
	return nil
}

// Options returns the format package's options for the Spec.
func (s Spec) Options() (Options, error) {
	if err := s.Validate(); err != nil {
		return Options{}, err
	}
	o := Options{Format: s.Format, Features: s.Features, Label: s.Label, Columns: s.Columns, Guesser: s.Guesser}
	if s.Template != "" {
		name := s.TemplateName
		if name == "" {
			name = "template"
		}
		t, err := ParseTemplate(strings.NewReader(s.Template), name)
		if err != nil {
			return Options{}, err
		}
		o.Template = t
	}
	return o, nil
}

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
		given, err := ParseTemplate(strings.NewReader(g.Template), path)
		if err != nil {
			return s, err
		}
		if s.Template == "" {
			return s, fmt.Errorf("--template %s: the model was trained without a template (%s)", path, s.origin())
		}
		have, err := ParseTemplate(strings.NewReader(s.Template), "the model's template")
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
