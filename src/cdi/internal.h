/*
 * internal.h - shared inside src/cdi only.
 */
#ifndef TS_CDI_INTERNAL_H
#define TS_CDI_INTERNAL_H

#include <stddef.h>

#include "cdi/cdi.h"

struct ts_cdi_spec {
	char *path;	     /* spec file name */
	char *kind;	     /* "vendor/class" */
	struct ts_json *doc; /* validated document */
	unsigned priority;   /* spec dir index, higher wins */
};

/* A JSON pointer under construction, for messages ("/devices/0/name"). */
struct ts_cdi_ptr {
	char buf[1024];
	size_t len;
};

/* Append "/<key>" (escaped per RFC 6901); returns the old length for ts_cdi_ptr_pop(). */
size_t ts_cdi_ptr_push(struct ts_cdi_ptr *p, const char *key);
size_t ts_cdi_ptr_push_index(struct ts_cdi_ptr *p, size_t index);
void ts_cdi_ptr_pop(struct ts_cdi_ptr *p, size_t old_len);
/* The pointer text; "/" for the root. */
const char *ts_cdi_ptr_str(const struct ts_cdi_ptr *p);

/**
 * Convert the first document of a YAML text into a JSON tree (YAML 1.1
 * plain scalar resolution; aliases expanded, at most 1,000,000 nodes and 64
 * levels).
 * @return 0; -EINVAL with "<name>: line L column C: <problem>", or
 *         "<name>: empty document" for an empty or null document; -ENOMEM.
 */
int ts_cdi_yaml_parse(const char *buf, size_t len, const char *name, struct ts_json **ret,
		      struct ts_error **err);

/**
 * Validate a spec document in place (converting booleans/numbers in string
 * fields to strings).
 * @param[out] ret_kind  "vendor/class", caller frees.
 * @return 0; -EINVAL naming spec_path, the field's pointer and the value; -ENOMEM.
 */
int ts_cdi_spec_validate(struct ts_json *doc, const char *spec_path, char **ret_kind,
			 struct ts_error **err);

/* Validate k8s-style annotations (keys and total size) in place. */
int ts_cdi_annotations_validate(struct ts_json *annotations, const char *spec_path,
				struct ts_cdi_ptr *ptr, struct ts_error **err);

#endif
