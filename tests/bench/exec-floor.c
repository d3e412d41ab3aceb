/*
 * exec-floor - the floor of any runtime wrapper: a static program that
 * only execs the runtime named by EXEC_FLOOR_RUNTIME with its own argv
 * (argv[0] replaced).  Linked statically: no dynamic loader, no library.
 *
 * With EXEC_FLOOR_STAT_DIR set it first stat(2)s every entry of that
 * directory (fstatat(2) relative to it, as toposhim's CDI index checks a
 * spec dir): the floor of a wrapper that sees every edit of a spec file
 * without a process watching the dirs.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* stat every entry of path; @return 0, or -1 when it cannot be read */
static int stat_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	struct stat st;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			(void)fstatat(dirfd(d), e->d_name, &st, 0);
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	char *rt = getenv("EXEC_FLOOR_RUNTIME"), *dir = getenv("EXEC_FLOOR_STAT_DIR");

	(void)argc;
	if (rt == NULL)
		return 127;
	if (dir != NULL && stat_entries(dir) < 0) {
		perror(dir);
		return 127;
	}
	argv[0] = rt;
	execve(rt, argv, environ);
	perror("exec-floor");
	return 127;
}
