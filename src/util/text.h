/*
 * text.h - small helpers over NUL-terminated text.
 */
#ifndef TS_UTIL_TEXT_H
#define TS_UTIL_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/**
 * Split text into lines, in place: every '\n' becomes a NUL.  A final line
 * without '\n' counts; an empty text has no lines.
 * @param[in,out] text   the text; the lines point into it.
 * @param[out]    ret_n  the number of lines.
 * @return the vector of n line pointers (the caller frees the vector, not
 *         the lines), or NULL on OOM.
 */
char **ts_split_lines(char *text, size_t *ret_n);

/*
 * A value quoted in an error message, clipped: at most TS_CLIP_BYTES bytes
 * of it, then "..." when there was more (an annotation of 100,000 bytes
 * must not become 100 KB in an engine's log and a pod's events at each
 * retry).  Use as printf("'" TS_CLIP_FMT "'", TS_CLIP_ARGS(s)); s not NULL.
 */
#define TS_CLIP_BYTES 64
#define TS_CLIP_FMT "%.64s%s"
#define TS_CLIP_ARGS(s) (s), (strlen(s) > TS_CLIP_BYTES ? "..." : "")

/**
 * Whether s is a cpuset list as the kernel and the OCI spec write it: ""
 * or comma-separated N or N-M (N <= M), decimal, each below 65536, no
 * spaces, signs, strides or empty items ("0-3,8", not "8-0", " 0", "0,,8",
 * "-1", "0x1", "1-3:1").  Node lists (mems) use the same syntax.
 * @param[in] s  NUL-terminated; borrowed.
 */
bool ts_cpulist_valid(const char *s);

/**
 * Whether a and b differ as text, NULL counting as "" (an unset cpu or
 * node list is the empty one).
 * @param[in] a, b  NUL-terminated or NULL; borrowed.
 */
bool ts_text_differs(const char *a, const char *b);

/**
 * Read the decimal number of a cpuset list item at p: one or more digits
 * (leading zeros allowed, "010" is 10), below 65536.
 * @param[in] p       NUL-terminated; borrowed.
 * @param[out] ret    the number; untouched on failure.
 * @return the first byte after the digits; NULL when p does not start with
 *         a digit or the number is 65536 or more.
 */
const char *ts_cpulist_number(const char *p, unsigned *ret);

/**
 * An absolute path cleaned lexically, as Go's path.Clean() and so runc's
 * cgroup paths (libcontainer/utils CleanPath()): repeated slashes and "."
 * components dropped, each ".." removing the component before it, a ".."
 * at the root staying at the root ("/../../a" is "/a"), no trailing slash
 * but for "/" itself.  Symlinks are not followed.
 * @param[in] path  NUL-terminated; a relative one is taken as if it began
 *                  with "/"; borrowed.
 * @return a new string, the caller frees it; NULL on ENOMEM.
 */
char *ts_path_clean_absolute(const char *path);

/* The runtimes toposhim knows apart by the state they keep of a container
 * (here, below the modules that need it: runtime, state). */
enum ts_runtime_family {
	TS_RUNTIME_FAMILY_UNKNOWN,
	TS_RUNTIME_FAMILY_RUNC, /* runc (and runc-compatible Go runtimes): <root>/<id>/state.json */
	TS_RUNTIME_FAMILY_CRUN, /* crun: <root>/<id>/status */
	_TS_RUNTIME_FAMILY_MAX,
};

/**
 * The family of a runtime binary, from its file name: a base name starting
 * with "crun" is crun, one starting with "runc" is runc ("runc", "crun",
 * "runc.amd64", "crun-1.8"), anything else (and NULL) UNKNOWN.
 */
enum ts_runtime_family ts_runtime_family_of_path(const char *path);

/**
 * The file a runtime of family f keeps in <root>/<container id> from its
 * create on, which holds its state of the container: "state.json" (runc),
 * "status" (crun).
 * @return a static string; NULL for UNKNOWN or out of range.
 */
const char *ts_runtime_family_state_file(enum ts_runtime_family f);

#endif
