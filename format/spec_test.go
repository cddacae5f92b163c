package format

import (
	"strings"
	"testing"
)

// TestForTagging: each option given at tagging time is accepted when it is
// the model's and refused with the difference named otherwise; --format
// changes the format only for a model without template or feature set.
func TestForTagging(t *testing.T) {
	const tpl = "U00:%x[0,0]\nB\n"
	tplModel := Spec{Format: "conll", Template: tpl}
	posModel := Spec{Format: "conllu", Features: "pos", Label: "xpos"}
	attrModel := Spec{Format: "crfsuite"}
	for _, c := range []struct {
		name        string
		model, give Spec
		want        Spec   // when no error
		err         string // a part of the error
	}{
		{"nothing given", tplModel, Spec{}, tplModel, ""},
		{"same template, other text", tplModel, Spec{Template: "# c\n\n" + tpl, TemplateName: "a.tpl"}, tplModel, ""},
		{"other template", tplModel, Spec{Template: "U00:%x[0,1]\n", TemplateName: "b.tpl"}, Spec{}, "--template b.tpl: not the template the model was trained with"},
		{"template, model without", posModel, Spec{Template: tpl, TemplateName: "c.tpl"}, Spec{}, "--template c.tpl: the model was trained without a template (it has --features pos)"},
		{"bad template", tplModel, Spec{Template: "U00:%x[0\n", TemplateName: "d.tpl"}, Spec{}, "d.tpl"},
		{"same features", posModel, Spec{Features: "pos"}, posModel, ""},
		{"features, model with template", tplModel, Spec{Features: "pos"}, Spec{}, "--features pos: the model was trained without a built-in feature set (it has a template)"},
		{"other features", posModel, Spec{Features: "morph"}, Spec{}, "--features morph: the model was trained with --features pos"},
		{"same label", posModel, Spec{Label: "xpos"}, posModel, ""},
		{"default label", Spec{Format: "conllu", Features: "pos"}, Spec{Label: "upos"}, Spec{Format: "conllu", Features: "pos"}, ""},
		{"other label", posModel, Spec{Label: "upos"}, Spec{}, "--label upos: the model was trained on the xpos column"},
		{"label, attribute model", attrModel, Spec{Label: "upos"}, Spec{}, "--label upos: the model reads crfsuite input, not conllu labels"},
		{"format of an attribute model", attrModel, Spec{Format: "conll"}, Spec{Format: "conll"}, ""},
		{"format of a template model", tplModel, Spec{Format: "crfsuite"}, Spec{}, "the model extracts its features from conll input (--format crfsuite cannot be used with it)"},
	} {
		got, err := c.model.ForTagging(c.give)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err == "" && got != c.want:
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	for path, want := range map[string]string{"a.conllu": "conllu", "a.conllu.gz": "conllu", "a.txt": "crfsuite"} {
		if got := (Spec{}).Resolve(path).Format; got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	if got := (Spec{Features: "pos"}).Resolve("a.txt").Format; got != "conll" {
		t.Errorf("features without format: %s, want conll", got)
	}
}
