/*
 * stand-in-runtime.c - plays runc for the soak test (tests/soak/soak.bash).
 *
 * Called as `--root ROOT COMMAND [OPTION...] ID`, it keeps ROOT/ID from
 * create to delete, as runc keeps its state dir, and runs no process and no
 * hook; every other command succeeds and does nothing.  Like runc, it makes
 * the dir in the process toposhim exec'd into (a shell script would fork
 * mkdir, whose dir can appear after a SIGKILLed create is gone: no real
 * runtime does that).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Remove ROOT/ID and the one file create put there. */
static int remove_state(const char *dir)
{
	char file[4200];

	snprintf(file, sizeof(file), "%s/state", dir);
	if (unlink(file) < 0 && errno != ENOENT)
		return -1;
	return rmdir(dir) < 0 && errno != ENOENT ? -1 : 0;
}

int main(int argc, char **argv)
{
	char dir[4096], file[4200];
	FILE *f;

	if (argc < 5 || strcmp(argv[1], "--root") != 0) {
		fprintf(stderr, "stand-in-runtime: usage: --root ROOT COMMAND ... ID\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/%s", argv[2], argv[argc - 1]);
	if (strcmp(argv[3], "delete") == 0)
		return remove_state(dir) < 0 ? 1 : 0;
	if (strcmp(argv[3], "create") != 0)
		return 0;
	if (mkdir(dir, 0700) < 0) {
		perror(dir);
		return 1;
	}
	snprintf(file, sizeof(file), "%s/state", dir);
	f = fopen(file, "we");
	if (f == NULL || fputs("created\n", f) < 0 || fclose(f) != 0) {
		perror(file);
		return 1;
	}
	return 0;
}
