/*
 * replay.c - main() of tests/fuzz/replay-<name>: run a fuzz target's LLVMFuzzerTestOneInput()
 * once on every file named, or in a directory named, on the command line (the committed
 * seeds and the regression inputs, tests/fuzz/Makefile.inc), without libFuzzer: make check
 * replays them in every build, with the sanitizers in build-asan and under valgrind.
 * Each input is copied into a buffer of exactly its size, so a read past the end is seen.
 * Exit 0 after all inputs; a broken check aborts (fuzz.h).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/fileio.h"

static size_t replayed;

static void replay_file(const char *path)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	cleanup_free uint8_t *exact = NULL;
	size_t len = 0;

	if (ts_read_file_at(AT_FDCWD, path, 16u << 20, &buf, &len, &err) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, err ? err->msg : "cannot read");
		exit(2);
	}
	exact = malloc(len > 0 ? len : 1);
	fuzz_check(exact != NULL, "out of memory");
	memcpy(exact, buf, len);
	(void)LLVMFuzzerTestOneInput(exact, len);
	replayed++;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct dirent **names = NULL;
		struct stat st;
		int n;

		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			replay_file(argv[i]);
			continue;
		}
		n = scandir(argv[i], &names, NULL, by_name);
		for (int k = 0; k < n; k++) {
			char path[8192];

			if (names[k]->d_name[0] != '.' &&
			    snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name) <
				    (int)sizeof(path) &&
			    stat(path, &st) == 0 && S_ISREG(st.st_mode))
				replay_file(path);
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %zu inputs\n", replayed);
	return 0;
}
