/*
 * yaml.c - the first document of a YAML text as a ts_json tree (libyaml).
 *
 * Plain (unquoted) scalars are resolved with the YAML 1.1 rules the reference
 * library applies through go-yaml v2: null (~, null, Null, NULL, empty),
 * booleans (y/n, yes/no, true/false, on/off in three capitalisations),
 * integers (decimal, 0x hex, 0o and leading-0 octal, 0b binary, '_'
 * separators, sign) stored as decimal numbers, floats kept as numbers
 * (one beyond a double's range stays a string, as go-yaml leaves it).
 * Everything quoted stays a string.  A plain "<<" key merges a mapping, or a
 * sequence of mappings, into the one it is in (YAML 1.1's merge key, which
 * go-yaml applies): the mapping's own keys win, then the earlier of the
 * merged ones.  libyaml's document loader tags untagged
 * plain scalars as !!str, so an explicit "!!str 0640" is resolved like a plain
 * scalar too (NEEDSWORK: use the event API to tell them apart).
 *
 * Hostile input is bounded: aliases are expanded, so what counts is the size
 * of the JSON text the document becomes (YAML_MAX_EXPANDED_BYTES), besides
 * the node count and depth, and the anchors (YAML_MAX_ANCHORS); duplicate
 * keys are found by sorting each mapping's keys once; a NUL in a string is
 * refused, not cut short.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cdi/internal.h"
#include "util/cleanup.h"

#define YAML_MAX_NODES 200000 /* aliases can multiply a small text */
#define YAML_MAX_DEPTH 64
/* What the document may expand to, counted as the JSON text it becomes: no
 * more than a JSON spec file may hold (SPEC_MAX_BYTES).  One 64 KiB scalar
 * aliased 200,000 times stays under YAML_MAX_NODES but is 13 GB. */
#define YAML_MAX_EXPANDED_BYTES (16u << 20)
/* libyaml's loader checks each anchor against every one before it (its
 * duplicate check): 40,000 anchors took 10 s, 60,000 81 s (helper-23).
 * No spec needs more than a few. */
#define YAML_MAX_ANCHORS 1000

static inline void yaml_parser_freep(yaml_parser_t **p)
{
	if (*p != NULL)
		yaml_parser_delete(*p);
}
#define cleanup_yaml_parser __attribute__((cleanup(yaml_parser_freep)))

static inline void yaml_document_freep(yaml_document_t **d)
{
	if (*d != NULL)
		yaml_document_delete(*d);
}
#define cleanup_yaml_document __attribute__((cleanup(yaml_document_freep)))

struct conv {
	yaml_document_t *doc;
	const char *name;
	size_t nodes;
	size_t bytes; /* of the JSON text converted so far */
	struct ts_error **err;
};

/* Count what node adds to the JSON text; false (with the error set) past the bound. */
static bool charge(struct conv *c, const yaml_node_t *node, size_t bytes)
{
	c->bytes += bytes;
	if (c->bytes <= YAML_MAX_EXPANDED_BYTES)
		return true;
	ts_error_set(c->err, 0,
		     "%s: line %zu column %zu: document expands to more than %u bytes "
		     "(aliases)",
		     c->name, node->start_mark.line + 1, node->start_mark.column + 1,
		     YAML_MAX_EXPANDED_BYTES);
	return false;
}

/* A scalar holding NUL ("\0", "\x00") would be cut short as a C string. */
static bool has_nul(struct conv *c, const yaml_node_t *node)
{
	if (memchr(node->data.scalar.value, '\0', node->data.scalar.length) == NULL)
		return false;
	ts_error_set(c->err, 0, "%s: line %zu column %zu: NUL character in a string", c->name,
		     node->start_mark.line + 1, node->start_mark.column + 1);
	return true;
}

static bool one_of(const char *s, const char *const *list)
{
	for (; *list != NULL; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* Parse a YAML 1.1 integer (after removing '_'); false if s is not one. */
static bool parse_yaml_int(const char *s, bool *neg, uint64_t *val)
{
	int base = 10;
	uint64_t v = 0;

	*neg = false;
	if (*s == '+' || *s == '-')
		*neg = *s++ == '-';
	if (*s == '\0')
		return false;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
		base = 8;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		s += 2;
	} else if (s[0] == '0' && s[1] != '\0') {
		base = 8;
		s++;
	}
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (d >= base || v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*val = v;
	return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool is_yaml_float(const char *s)
{
	bool digits = false;

	if (*s == '+' || *s == '-')
		s++;
	while (*s >= '0' && *s <= '9') {
		s++;
		digits = true;
	}
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9') {
			s++;
			digits = true;
		}
	}
	if (!digits)
		return false;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static struct ts_json *resolve_plain(const char *text)
{
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
	static const char *const trues[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
					    "True", "TRUE", "on",  "On",  "ON",	 NULL};
	static const char *const falses[] = {"n",     "N",     "no",  "No",  "NO",  "false",
					     "False", "FALSE", "off", "Off", "OFF", NULL};
	cleanup_free char *plain = NULL;
	char num[32];
	uint64_t v;
	bool neg;
	size_t j = 0;

	/* fast paths: most scalars are plain words or paths */
	if (text[0] != '\0' && strchr("~nNyYtTfFoO", text[0]) == NULL &&
	    strchr("0123456789+-.", text[0]) == NULL)
		return ts_json_new_string(text);
	if (one_of(text, nulls))
		return ts_json_new_null();
	if (one_of(text, trues))
		return ts_json_new_bool(true);
	if (one_of(text, falses))
		return ts_json_new_bool(false);
	if (strchr("0123456789+-.", text[0]) == NULL)
		return ts_json_new_string(text);
	plain = malloc(strlen(text) + 1);
	if (plain == NULL)
		return NULL;
	for (const char *c = text; *c != '\0'; c++)
		if (*c != '_')
			plain[j++] = *c;
	plain[j] = '\0';
	if (parse_yaml_int(plain, &neg, &v)) {
		if (!neg)
			snprintf(num, sizeof(num), "%" PRIu64, v);
		else if (v <= (uint64_t)INT64_MAX + 1)
			snprintf(num, sizeof(num), "-%" PRIu64, v);
		else
			return ts_json_new_string(text);
		return ts_json_new_number_raw(num);
	}
	if (is_yaml_float(plain)) {
		/* JSON wants a digit on both sides of '.', YAML does not */
		double d = strtod(plain, NULL);

		/* out of a double's range ("20e0650"): the reference's
		 * strconv.ParseFloat fails and the scalar stays a string;
		 * JSON has no spelling for inf (underflow gives 0, as there) */
		if (!isfinite(d))
			return ts_json_new_string(text);
		/* the shortest spelling that reads back the same ("0.6",
		 * not "0.59999999999999998": helper-19 saw the latter in a
		 * message) */
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(num, sizeof(num), "%.*g", prec, d);
			if (strtod(num, NULL) == d)
				break;
		}
		return ts_json_new_number_raw(num);
	}
	return ts_json_new_string(text);
}

static struct ts_json *convert(struct conv *c, yaml_node_t *node, int depth);

static char *key_text(struct conv *c, yaml_node_t *node)
{
	struct ts_json *k;
	char *s;

	if (node->type != YAML_SCALAR_NODE) {
		ts_error_set(c->err, 0, "%s: line %zu column %zu: mapping key is not a scalar",
			     c->name, node->start_mark.line + 1, node->start_mark.column + 1);
		return NULL;
	}
	if (has_nul(c, node) || !charge(c, node, node->data.scalar.length + 4))
		return NULL;
	if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return strndup((const char *)node->data.scalar.value, node->data.scalar.length);
	k = resolve_plain((const char *)node->data.scalar.value);
	if (k == NULL)
		return NULL;
	switch (k->type) {
	case TS_JSON_NULL:
		s = strdup("null");
		break;
	case TS_JSON_BOOL:
		s = strdup(k->u.boolean ? "true" : "false");
		break;
	case TS_JSON_NUMBER:
		s = strdup(k->u.number);
		break;
	default:
		s = strdup(k->u.string);
		break;
	}
	ts_json_free(k);
	return s;
}

static struct ts_json *convert_mapping(struct conv *c, yaml_node_t *node, int depth);

static bool is_merge_key(const yaml_node_t *kn)
{
	return kn->type == YAML_SCALAR_NODE && kn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       kn->data.scalar.length == 2 && memcmp(kn->data.scalar.value, "<<", 2) == 0;
}

/* Merge the mapping src into obj: a key obj has already stays as it is. */
static bool merge_one(struct conv *c, struct ts_json *obj, yaml_node_t *src, int depth)
{
	cleanup_json struct ts_json *from = NULL;
	const char *key;
	struct ts_json *val;
	size_t i;

	if (src->type != YAML_MAPPING_NODE) {
		ts_error_set(
			c->err, 0,
			"%s: line %zu column %zu: merge key '<<' needs a mapping or a sequence "
			"of mappings",
			c->name, src->start_mark.line + 1, src->start_mark.column + 1);
		return false;
	}
	from = convert_mapping(c, src, depth + 1);
	if (from == NULL)
		return false;
	ts_json_object_foreach (from, i, key, val) {
		struct ts_json *copy;

		if (ts_json_get(obj, key) != NULL)
			continue;
		copy = ts_json_dup(val);
		if (copy == NULL || ts_json_object_append(obj, key, copy, NULL) < 0)
			return false;
	}
	return true;
}

/* The "<<" keys of node, in order, after its own keys are in obj: each
 * merged mapping adds the keys obj lacks (a sequence: its mappings in
 * order, the earlier winning). */
static bool merge_keys(struct conv *c, struct ts_json *obj, yaml_node_t *node, int depth)
{
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top;
	     p++) {
		yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);

		if (kn == NULL || vn == NULL || !is_merge_key(kn))
			continue;
		if (vn->type != YAML_SEQUENCE_NODE) {
			if (!merge_one(c, obj, vn, depth))
				return false;
			continue;
		}
		for (yaml_node_item_t *i = vn->data.sequence.items.start;
		     i < vn->data.sequence.items.top; i++) {
			yaml_node_t *item = yaml_document_get_node(c->doc, *i);

			if (item == NULL || !merge_one(c, obj, item, depth))
				return false;
		}
	}
	return true;
}

static struct ts_json *convert_mapping(struct conv *c, yaml_node_t *node, int depth)
{
	cleanup_json struct ts_json *obj = ts_json_new_object();
	yaml_node_pair_t *pairs = node->data.mapping.pairs.start;
	yaml_node_t *kn;
	bool merges = false;
	size_t dup;
	int r;

	if (obj == NULL)
		return NULL;
	if (depth > YAML_MAX_DEPTH) {
		ts_error_set(c->err, 0, "%s: line %zu column %zu: document too large or too deep",
			     c->name, node->start_mark.line + 1, node->start_mark.column + 1);
		return NULL;
	}
	for (yaml_node_pair_t *p = pairs; p < node->data.mapping.pairs.top; p++) {
		cleanup_free char *key = NULL;
		struct ts_json *val;
		yaml_node_t *vn = yaml_document_get_node(c->doc, p->value);

		kn = yaml_document_get_node(c->doc, p->key);
		if (kn == NULL || vn == NULL)
			return NULL;
		if (is_merge_key(kn)) {
			merges = true;
			continue;
		}
		key = key_text(c, kn);
		if (key == NULL)
			return NULL;
		val = convert(c, vn, depth + 1);
		if (val == NULL || ts_json_object_append(obj, key, val, NULL) < 0)
			return NULL;
	}
	/* once per mapping, sorted: a lookup per key is quadratic in 60,000 keys */
	r = ts_json_object_find_duplicate(obj, &dup);
	if (r < 0)
		return NULL;
	if (r > 0) {
		/* the dup-th key that is not "<<" */
		yaml_node_pair_t *at = pairs;

		for (size_t k = 0;; at++) {
			kn = yaml_document_get_node(c->doc, at->key);
			if (is_merge_key(kn))
				continue;
			if (k++ == dup)
				break;
		}
		ts_error_set(c->err, 0, "%s: line %zu column %zu: duplicate key '%s'", c->name,
			     kn->start_mark.line + 1, kn->start_mark.column + 1,
			     obj->u.object.keys[dup]);
		return NULL;
	}
	if (merges && !merge_keys(c, obj, node, depth))
		return NULL;
	return TAKE_PTR(obj);
}

static struct ts_json *convert(struct conv *c, yaml_node_t *node, int depth)
{
	cleanup_json struct ts_json *arr = NULL;

	if (++c->nodes > YAML_MAX_NODES || depth > YAML_MAX_DEPTH) {
		ts_error_set(c->err, 0, "%s: line %zu column %zu: document too large or too deep",
			     c->name, node->start_mark.line + 1, node->start_mark.column + 1);
		return NULL;
	}
	switch (node->type) {
	case YAML_SCALAR_NODE:
		if (has_nul(c, node) || !charge(c, node, node->data.scalar.length + 3))
			return NULL;
		if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
			return ts_json_new_string_len((const char *)node->data.scalar.value,
						      node->data.scalar.length);
		return resolve_plain((const char *)node->data.scalar.value);
	case YAML_SEQUENCE_NODE:
		if (!charge(c, node, 2))
			return NULL;
		arr = ts_json_new_array();
		if (arr == NULL)
			return NULL;
		for (yaml_node_item_t *i = node->data.sequence.items.start;
		     i < node->data.sequence.items.top; i++) {
			yaml_node_t *item = yaml_document_get_node(c->doc, *i);
			struct ts_json *v = item ? convert(c, item, depth + 1) : NULL;

			if (v == NULL || ts_json_array_append(arr, v, NULL) < 0)
				return NULL;
		}
		return TAKE_PTR(arr);
	case YAML_MAPPING_NODE:
		if (!charge(c, node, 2))
			return NULL;
		return convert_mapping(c, node, depth);
	default:
		return NULL;
	}
}

/*
 * libyaml's reader (encoding, control characters) gives a byte offset, not
 * a mark (helper-18: a control character on line 3 was "line 1 column
 * 1"): the line and column (in bytes) are counted here, and the offending
 * value named as a code point, or as a byte where the UTF-8 is invalid.
 */
static int reader_error(const yaml_parser_t *parser, const char *buf, size_t len, const char *name,
			struct ts_error **err)
{
	size_t off = parser->problem_offset < len ? parser->problem_offset : len;
	size_t line = 1, col = 1;
	const char *problem = parser->problem != NULL ? parser->problem : "invalid YAML";
	char value[24] = "";

	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (parser->problem_value >= 0 && strstr(problem, "octet") != NULL)
		snprintf(value, sizeof(value), " (byte 0x%02X)", (unsigned)parser->problem_value);
	else if (parser->problem_value >= 0)
		snprintf(value, sizeof(value), " (U+%04X)", (unsigned)parser->problem_value);
	return ts_error_set(err, 0, "%s: line %zu column %zu: %s%s", name, line, col, problem,
			    value);
}

/* The anchor of an event, or NULL. */
static const yaml_char_t *event_anchor(const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return ev->data.scalar.anchor;
	case YAML_SEQUENCE_START_EVENT:
		return ev->data.sequence_start.anchor;
	case YAML_MAPPING_START_EVENT:
		return ev->data.mapping_start.anchor;
	default:
		return NULL;
	}
}

/* Refuse a first document with more than YAML_MAX_ANCHORS anchors before
 * the loader's quadratic registration sees it.  A text with no more '&'
 * than that has no more anchors; another is counted from the parser's
 * events (linear).  A syntax error is left to the loader to report.
 * @return 0; -EINVAL "<name>: line L column C: more than N anchors";
 *         -ENOMEM. */
static int check_anchors(const char *buf, size_t len, const char *name, struct ts_error **err)
{
	yaml_parser_t parser;
	size_t amps = 0, n = 0;
	int r = 0;

	for (const char *p = buf; (p = memchr(p, '&', len - (size_t)(p - buf))) != NULL; p++)
		if (++amps > YAML_MAX_ANCHORS)
			break;
	if (amps <= YAML_MAX_ANCHORS)
		return 0;
	if (!yaml_parser_initialize(&parser))
		return ts_error_set(err, ENOMEM, "out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)buf, len);
	for (;;) {
		yaml_event_t ev;
		bool end;

		if (!yaml_parser_parse(&parser, &ev)) {
			if (parser.error == YAML_MEMORY_ERROR)
				r = ts_error_set(err, ENOMEM, "out of memory");
			break;
		}
		if (event_anchor(&ev) != NULL && ++n > YAML_MAX_ANCHORS)
			r = ts_error_set(err, 0, "%s: line %zu column %zu: more than %d anchors",
					 name, ev.start_mark.line + 1, ev.start_mark.column + 1,
					 YAML_MAX_ANCHORS);
		end = ev.type == YAML_DOCUMENT_END_EVENT || ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
		if (r < 0 || end)
			break;
	}
	yaml_parser_delete(&parser);
	return r;
}

int ts_cdi_yaml_parse(const char *buf, size_t len, const char *name, struct ts_json **ret,
		      struct ts_error **err)
{
	yaml_parser_t parser_storage;
	yaml_document_t doc_storage;
	cleanup_yaml_parser yaml_parser_t *parser = NULL;
	cleanup_yaml_document yaml_document_t *doc = NULL;
	struct conv c = {.name = name, .err = err};
	yaml_node_t *root;
	struct ts_json *j;
	int r = check_anchors(buf, len, name, err);

	if (r < 0)
		return r;
	if (!yaml_parser_initialize(&parser_storage))
		return ts_error_set(err, ENOMEM, "out of memory");
	parser = &parser_storage;
	yaml_parser_set_input_string(parser, (const unsigned char *)buf, len);
	if (!yaml_parser_load(parser, &doc_storage)) {
		if (parser->error == YAML_MEMORY_ERROR)
			return ts_error_set(err, ENOMEM, "out of memory");
		if (parser->error == YAML_READER_ERROR)
			return reader_error(parser, buf, len, name, err);
		return ts_error_set(err, 0, "%s: line %zu column %zu: %s%s%s", name,
				    parser->problem_mark.line + 1, parser->problem_mark.column + 1,
				    parser->problem ? parser->problem : "invalid YAML",
				    parser->context ? " " : "",
				    parser->context ? parser->context : "");
	}
	doc = &doc_storage;
	c.doc = doc;
	root = yaml_document_get_root_node(doc);
	if (root == NULL ||
	    (root->type == YAML_SCALAR_NODE && root->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	     one_of((const char *)root->data.scalar.value,
		    (const char *const[]){"", "~", "null", "Null", "NULL", NULL})))
		return ts_error_set(err, 0, "%s: empty document", name);
	j = convert(&c, root, 0);
	if (j == NULL) {
		if (err != NULL && *err != NULL)
			return ts_error_code(*err);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	*ret = j;
	return 0;
}

/* --- JSON tree -> YAML text ------------------------------------------------ */

static inline void yaml_emitter_freep(yaml_emitter_t **e)
{
	if (*e != NULL)
		yaml_emitter_delete(*e);
}
#define cleanup_yaml_emitter __attribute__((cleanup(yaml_emitter_freep)))

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static int write_out(void *data, unsigned char *buffer, size_t size)
{
	struct out *o = data;

	if (o->len + size + 1 > o->cap) {
		size_t cap = (o->len + size + 1) * 2;
		char *b = realloc(o->buf, cap);

		if (b == NULL) {
			o->oom = true;
			return 0;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, buffer, size);
	o->len += size;
	o->buf[o->len] = '\0';
	return 1;
}

/* A string is written plain when a reader resolves the plain scalar to that
 * same string (not "8", "true", "null", "0x10"), else double-quoted; libyaml
 * quotes on its own what plain style cannot hold (": ", "#", a leading "-"). */
static bool plain_is_string(const char *s)
{
	cleanup_json struct ts_json *j = resolve_plain(s);

	return j != NULL && j->type == TS_JSON_STRING;
}

static bool emit_scalar(yaml_emitter_t *e, const char *text, bool quote)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(
		    &ev, NULL, NULL, (const yaml_char_t *)text, (int)strlen(text), 1, 1,
		    quote ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE))
		return false;
	return yaml_emitter_emit(e, &ev) != 0;
}

static bool emit_node(yaml_emitter_t *e, const struct ts_json *j)
{
	yaml_event_t ev;
	size_t i;
	const char *key;
	struct ts_json *v;

	switch (j->type) {
	case TS_JSON_NULL:
		return emit_scalar(e, "null", false);
	case TS_JSON_BOOL:
		return emit_scalar(e, j->u.boolean ? "true" : "false", false);
	case TS_JSON_NUMBER:
		return emit_scalar(e, j->u.number, false);
	case TS_JSON_STRING:
		return emit_scalar(e, j->u.string, !plain_is_string(j->u.string));
	case TS_JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  j->u.array.len == 0
								  ? YAML_FLOW_SEQUENCE_STYLE
								  : YAML_BLOCK_SEQUENCE_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return false;
		ts_json_array_foreach (j, i, v) {
			if (!emit_node(e, v))
				return false;
		}
		return yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
	case TS_JSON_OBJECT:
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 j->u.object.len == 0
								 ? YAML_FLOW_MAPPING_STYLE
								 : YAML_BLOCK_MAPPING_STYLE) ||
		    !yaml_emitter_emit(e, &ev))
			return false;
		ts_json_object_foreach (j, i, key, v) {
			if (!emit_scalar(e, key, !plain_is_string(key)) || !emit_node(e, v))
				return false;
		}
		return yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev);
	default:
		return false;
	}
}

int ts_cdi_yaml_serialize(const struct ts_json *root, char **ret, struct ts_error **err)
{
	yaml_emitter_t emitter_storage;
	cleanup_yaml_emitter yaml_emitter_t *e = NULL;
	struct out o = {0};
	yaml_event_t ev;
	bool ok;

	if (!yaml_emitter_initialize(&emitter_storage))
		return ts_error_set(err, ENOMEM, "out of memory");
	e = &emitter_storage;
	yaml_emitter_set_output(e, write_out, &o);
	yaml_emitter_set_unicode(e, 1);
	yaml_emitter_set_width(e, -1);
	ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
	     yaml_emitter_emit(e, &ev) &&
	     yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
	     yaml_emitter_emit(e, &ev) && emit_node(e, root) &&
	     yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(e, &ev) &&
	     yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(e, &ev) &&
	     yaml_emitter_flush(e);
	if (ok && !o.oom && o.buf != NULL) {
		*ret = o.buf;
		return 0;
	}
	free(o.buf);
	if (ok || o.oom || e->error == YAML_MEMORY_ERROR)
		return ts_error_set(err, ENOMEM, "out of memory");
	return ts_error_set(err, 0, "yaml: cannot write the document: %s",
			    e->problem != NULL ? e->problem : "emitter error");
}
