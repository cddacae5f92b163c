/*
 * tagc tags a CRFsuite attribute file with a CRFsuite model through
 * CRFsuite's own C library (the sources the npm package "crfsuite" ships)
 * and prints what `crfsuite tag` prints with the options given:
 *
 *     tagc [-r] [-p] [-i] [-l] MODEL DATA
 *
 * -p: "@score\tS\tL" and "@probability\tP" before each sequence; -i: ":M"
 * after each label, its marginal; -l: "\tLABEL:M" for every label; -r: the
 * reference label and a TAB first. It is simdcrf's oracle for the digits
 * CRFsuite prints (the npm binding returns labels only): package
 * bench/crfsuite compiles it on demand into the user cache, never into the
 * repository. The one difference from crfsuite tag: -r prints the
 * reference label as the data has it, where crfsuite tag prints "(null)"
 * for a label the model does not know.
 *
 * DATA is read as CRFsuite's frontend reads it: one item per line, fields
 * separated by TABs, the first the label, the others ATTR[:VALUE] where a
 * backslash escapes the next character and the first unescaped colon
 * starts the value (1 when absent or empty); an empty line ends a
 * sequence. Attributes the model does not know are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <crfsuite.h>

static int opt_reference, opt_probability, opt_marginal, opt_marginal_all;

typedef struct {
	crfsuite_instance_t inst;
	char **refs; /* reference labels as read */
	int nrefs, caprefs;
} sequence_t;

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "tagc: %s%s\n", msg, arg ? arg : "");
	exit(2);
}

/* unescape splits field f (modified in place) into its name and its value
 * (NULL if none), removing the escapes. */
static char *unescape(char *f, char **value)
{
	char *w = f, *r = f;
	*value = NULL;
	while (*r) {
		if (*r == '\\' && r[1]) {
			*w++ = r[1];
			r += 2;
		} else if (*r == ':') {
			*w = '\0';
			*value = r + 1; /* a number: no escapes */
			return f;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	return f;
}

static void tag(sequence_t *seq, crfsuite_tagger_t *tagger, crfsuite_dictionary_t *labels)
{
	int T = seq->inst.num_items, L = labels->num(labels), t, l;
	int *out = calloc(T, sizeof(int));
	floatval_t score = 0, lognorm = 0, prob = 0;
	const char *name = NULL;

	if (tagger->set(tagger, &seq->inst) != 0) die("tagger->set failed", NULL);
	if (tagger->viterbi(tagger, out, &score) != 0) die("tagger->viterbi failed", NULL);
	if (opt_probability) {
		tagger->lognorm(tagger, &lognorm);
		printf("@score\t%f\t%f\n", score, lognorm);
		printf("@probability\t%f\n", exp(score - lognorm));
	}
	for (t = 0; t < T; ++t) {
		if (opt_reference) printf("%s\t", seq->refs[t]);
		labels->to_string(labels, out[t], &name);
		printf("%s", name);
		labels->free(labels, name);
		if (opt_marginal) {
			tagger->marginal_point(tagger, out[t], t, &prob);
			printf(":%f", prob);
		}
		if (opt_marginal_all) {
			for (l = 0; l < L; ++l) {
				tagger->marginal_point(tagger, l, t, &prob);
				labels->to_string(labels, l, &name);
				printf("\t%s:%f", name, prob);
				labels->free(labels, name);
			}
		}
		printf("\n");
	}
	printf("\n");
	free(out);
}

static void clear(sequence_t *seq)
{
	int i;
	crfsuite_instance_finish(&seq->inst);
	crfsuite_instance_init(&seq->inst);
	for (i = 0; i < seq->nrefs; ++i) free(seq->refs[i]);
	seq->nrefs = 0;
}

int main(int argc, char *argv[])
{
	int i;
	crfsuite_model_t *model = NULL;
	crfsuite_tagger_t *tagger = NULL;
	crfsuite_dictionary_t *labels = NULL, *attrs = NULL;
	FILE *fp;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	sequence_t seq;

	for (i = 1; i < argc && argv[i][0] == '-'; ++i) {
		const char *o = argv[i] + 1;
		for (; *o; ++o) {
			switch (*o) {
			case 'r': opt_reference = 1; break;
			case 'p': opt_probability = 1; break;
			case 'i': opt_marginal = 1; break;
			case 'l': opt_marginal_all = 1; break;
			default: die("unknown option ", argv[i]);
			}
		}
	}
	if (argc - i != 2) die("usage: tagc [-r] [-p] [-i] [-l] MODEL DATA", NULL);
	if (crfsuite_create_instance_from_file(argv[i], (void **)&model) != 0) die("cannot open the model ", argv[i]);
	if (model->get_tagger(model, &tagger) || model->get_labels(model, &labels) || model->get_attrs(model, &attrs))
		die("cannot get the model's tagger and dictionaries", NULL);
	fp = fopen(argv[i + 1], "r");
	if (fp == NULL) die("cannot open ", argv[i + 1]);

	memset(&seq, 0, sizeof(seq));
	crfsuite_instance_init(&seq.inst);
	while ((n = getline(&line, &cap, fp)) >= 0) {
		crfsuite_item_t item;
		crfsuite_attribute_t cont;
		char *f, *next, *value, *label = NULL;
		int lid;

		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
		if (n == 0) {
			if (seq.inst.num_items > 0) tag(&seq, tagger, labels);
			clear(&seq);
			continue;
		}
		crfsuite_item_init(&item);
		for (f = line; f != NULL; f = next) {
			next = strchr(f, '\t');
			if (next) *next++ = '\0';
			if (*f == '\0') continue;
			if (label == NULL) {
				label = unescape(f, &value);
				continue;
			}
			f = unescape(f, &value);
			lid = attrs->to_id(attrs, f);
			if (lid < 0) continue;
			crfsuite_attribute_set(&cont, lid, (value && *value) ? atof(value) : 1.0);
			crfsuite_item_append_attribute(&item, &cont);
		}
		if (label == NULL) {
			crfsuite_item_finish(&item);
			continue;
		}
		lid = labels->to_id(labels, label);
		crfsuite_instance_append(&seq.inst, &item, lid < 0 ? labels->num(labels) : lid);
		crfsuite_item_finish(&item);
		if (seq.nrefs == seq.caprefs) {
			seq.caprefs = 2 * seq.caprefs + 16;
			seq.refs = realloc(seq.refs, seq.caprefs * sizeof(char *));
		}
		seq.refs[seq.nrefs++] = strdup(label);
	}
	if (seq.inst.num_items > 0) tag(&seq, tagger, labels);
	clear(&seq);
	free(line);
	fclose(fp);
	labels->release(labels);
	attrs->release(attrs);
	tagger->release(tagger);
	model->release(model);
	return 0;
}
