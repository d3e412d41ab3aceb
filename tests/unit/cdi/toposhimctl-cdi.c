/*
 * toposhimctl-cdi - `toposhimctl cdi` alone, for tests/integration/cdi-registry.bats
 * to run before toposhimctl's command table lists ts_ctl_cdi (then the bats
 * file uses toposhimctl itself).
 */
int ts_ctl_cdi(int argc, char **argv);

int main(int argc, char **argv)
{
	return ts_ctl_cdi(argc - 1, argv + 1);
}
