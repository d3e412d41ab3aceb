/*
 * exec-floor - the floor of any runtime wrapper: a static program that
 * only execs the runtime named by EXEC_FLOOR_RUNTIME with its own argv
 * (argv[0] replaced).  Linked statically: no dynamic loader, no library.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
	char *rt = getenv("EXEC_FLOOR_RUNTIME");

	(void)argc;
	if (rt == NULL)
		return 127;
	argv[0] = rt;
	execve(rt, argv, environ);
	perror("exec-floor");
	return 127;
}
