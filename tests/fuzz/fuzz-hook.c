/*
 * fuzz-hook.c - what the hooks read: `toposhim hook`'s OCI state on stdin
 * (ts_hook_state_parse()), and toposhim-cdi-hook's argv and state
 * (ts_cdi_hook_parse_args(), ts_cdi_hook_read_state(); hooks/cdi-hook/cdi-hook.h), then
 * what create-symlinks and chmod do inside a container root.
 *
 * First byte, bit 0 clear: the rest is toposhim hook's stdin.  Set: the rest is
 * "<argv[1..] separated by NUL>" FUZZ_SEP "<state>", with "@B@" in the state replaced by
 * a bundle dir whose config.json says root.path "rootfs".  When the state says pid 0 and
 * that bundle, create-symlinks and chmod run in <bundle>/rootfs, a root holding hostile
 * symlinks (/up -> ../../outside, /abs -> the outside file's absolute path, /etc, /proc).
 * The oracle: nothing outside the root changes (the outside file keeps mode 0600 and its
 * size, config.json keeps 0644, the bundle and the dir above hold nothing new).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi-hook.h"
#include "cli/cmd-hook.h"
#include "fuzz.h"
#include "util/cleanup.h"

static char top[1024], bundle[2048], rootfs[4096], outside[2048], config[4096];

static void setup(void)
{
	static const char cfg[] = "{\"root\":{\"path\":\"rootfs\"}}";

	if (top[0] != '\0')
		return;
	snprintf(top, sizeof(top), "%s", fuzz_path("hook"));
	snprintf(bundle, sizeof(bundle), "%s/bundle", top);
	snprintf(rootfs, sizeof(rootfs), "%s/rootfs", bundle);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	snprintf(config, sizeof(config), "%s/config.json", bundle);
	fuzz_mkdir(bundle);
	fuzz_write(config, cfg, strlen(cfg));
	fuzz_check(chmod(config, 0644) == 0, "chmod config.json");
	fuzz_write(outside, "secret", 6);
	fuzz_check(chmod(outside, 0600) == 0, "chmod outside");
}

/* A fresh hostile root. */
static void make_root(void)
{
	char path[8192];

	fuzz_rmtree(rootfs);
	snprintf(path, sizeof(path), "%s/etc/ld.so.conf.d", rootfs);
	fuzz_mkdir(path);
	snprintf(path, sizeof(path), "%s/proc", rootfs);
	fuzz_mkdir(path);
	snprintf(path, sizeof(path), "%s/up", rootfs);
	fuzz_check(symlink("../../outside", path) == 0, "symlink up");
	snprintf(path, sizeof(path), "%s/abs", rootfs);
	fuzz_check(symlink(outside, path) == 0, "symlink abs");
	snprintf(path, sizeof(path), "%s/etc/passwd", rootfs);
	fuzz_write(path, "root:x:0:0::/:/bin/sh\n", 22);
}

static size_t entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	fuzz_check(d != NULL, "cannot list a dir");
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void check_outside(void)
{
	struct stat st;

	fuzz_check(lstat(outside, &st) == 0 && S_ISREG(st.st_mode) &&
			   (st.st_mode & 07777) == 0600 && st.st_size == 6,
		   "ESCAPE: the file outside the root changed");
	fuzz_check(lstat(config, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644,
		   "ESCAPE: the bundle's config.json changed");
	fuzz_check(entries(top) == 2, "ESCAPE: a new entry beside the bundle");
	fuzz_check(entries(bundle) == 2, "ESCAPE: a new entry in the bundle");
}

/* s with every "@B@" replaced by the bundle dir; caller frees */
static char *expand(const char *s)
{
	size_t blen = strlen(bundle), len = 0;
	char *out = malloc(strlen(s) * (blen + 1) + 1);

	fuzz_check(out != NULL, "out of memory");
	while (*s != '\0') {
		if (strncmp(s, "@B@", 3) == 0) {
			memcpy(out + len, bundle, blen);
			len += blen;
			s += 3;
		} else {
			out[len++] = *s++;
		}
	}
	out[len] = '\0';
	return out;
}

static void cdi_hook(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *state = NULL, *root = NULL, *args_text = NULL;
	cleanup_free char **argv = NULL;
	cleanup_close int fd = -EBADF, rootfd = -EBADF;
	struct ts_cdi_hook_args a;
	char *parts[2];
	size_t alen;
	pid_t pid = -1;
	int argc = 2;

	setup();
	fuzz_split(data, size, parts, 2);
	/* argv[1..]: the first part, NUL-separated (the split copies stop at NUL: use data) */
	alen = 0;
	while (alen < size && !(alen + 4 <= size && memcmp(data + alen, FUZZ_SEP, 4) == 0))
		alen++;
	args_text = fuzz_strndup(data, alen);
	for (size_t i = 0; i < alen; i++)
		argc += args_text[i] == '\0';
	argv = calloc((size_t)argc + 1, sizeof(*argv));
	fuzz_check(argv != NULL, "out of memory");
	argv[0] = (char *)"toposhim-cdi-hook";
	argc = 1;
	argv[argc++] = args_text;
	for (size_t i = 0; i < alen; i++)
		if (args_text[i] == '\0')
			argv[argc++] = args_text + i + 1;
	if (ts_cdi_hook_parse_args(argc, argv, &a, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL,
			   "cdi-hook: argv refused without a message");
		goto out;
	}
	state = expand(parts[1]);
	fd = memfd_create("state", MFD_CLOEXEC);
	fuzz_check(fd >= 0, "memfd");
	fuzz_check(write(fd, state, strlen(state)) == (ssize_t)strlen(state), "memfd write");
	fuzz_check(lseek(fd, 0, SEEK_SET) == 0, "memfd seek");
	if (ts_cdi_hook_read_state(fd, &pid, &root, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL,
			   "cdi-hook: state refused without a message");
	} else if (pid == 0 && root != NULL && strcmp(root, rootfs) == 0 &&
		   strcmp(a.cmd, "update-ldcache") != 0) {
		/* update-ldcache runs the host's ldconfig: not from a fuzzer */
		make_root();
		rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
		fuzz_check(rootfd >= 0, "open the root");
		if (ts_cdi_hook_apply(rootfd, &a, &err) < 0)
			fuzz_check(err != NULL && err->msg != NULL,
				   "cdi-hook: failure without a message");
		check_outside();
	}
	ts_cdi_hook_args_release(&a);
out:
	fuzz_parts_free(parts, 2);
}

static void toposhim_hook(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_hook_state st = {0};

	if (ts_hook_state_parse((const char *)data, size, &st, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL && strncmp(err->msg, "stdin: ", 7) == 0,
			   "hook: failure without a \"stdin: \" message");
		ts_hook_state_release(&st);
		return;
	}
	fuzz_check(st.container_id != NULL, "hook: no container id");
	fuzz_check(st.pid >= 0, "hook: negative pid");
	ts_hook_state_release(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if ((data[0] & 1) == 0)
		toposhim_hook(data + 1, size - 1);
	else
		cdi_hook(data + 1, size - 1);
	return 0;
}
