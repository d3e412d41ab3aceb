/* main.c - toposhim, the OCI runtime wrapper. */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return 0;
}
