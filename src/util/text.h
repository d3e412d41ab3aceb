/*
 * text.h - small helpers over NUL-terminated text.
 */
#ifndef TS_UTIL_TEXT_H
#define TS_UTIL_TEXT_H

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

#endif
