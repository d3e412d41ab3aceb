/*
 * convert.c - cgroup v1 cpu.shares <-> cgroup v2 cpu.weight.
 *
 * The quadratic formula needs log2 and a power of ten; libm is not linked
 * into toposhim, and double precision series are exact enough here (the
 * inputs are integers 3..262143, the outputs integers 1..10000).
 */
#include <stdint.h>

#include "cgroup/cgroup.h"

#define SHARES_MIN 2
#define SHARES_MAX 262144
#define WEIGHT_MAX 10000
#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402

uint64_t ts_cgroup_weight_to_shares(uint64_t weight)
{
	uint64_t s = (weight * 1024 + 50) / 100;

	if (weight > WEIGHT_MAX)
		s = (WEIGHT_MAX * 1024 + 50) / 100;
	if (s < SHARES_MIN)
		return SHARES_MIN;
	if (s > SHARES_MAX)
		return SHARES_MAX;
	return s;
}

uint64_t ts_cgroup_shares_to_weight_linear(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares < SHARES_MIN)
		shares = SHARES_MIN;
	if (shares > SHARES_MAX)
		shares = SHARES_MAX;
	return 1 + ((shares - 2) * 9999) / 262142;
}

/* Natural logarithm of x > 0: x = m * 2^k with m in [1, 2), ln m by the atanh series. */
static double ln(double x)
{
	int k = 0;

	while (x >= 2.0) {
		x /= 2.0;
		k++;
	}
	while (x < 1.0) {
		x *= 2.0;
		k--;
	}
	double t = (x - 1.0) / (x + 1.0), t2 = t * t, term = t, sum = 0.0;
	for (int i = 1; i < 60; i += 2) {
		sum += term / i;
		term *= t2;
	}
	return 2.0 * sum + k * LN2;
}

/* e^y: y = n ln2 + r with |r| <= ln2/2, Taylor series for e^r, then scale by 2^n. */
static double expo(double y)
{
	int n = (int)(y / LN2 + (y >= 0 ? 0.5 : -0.5));
	double r = y - n * LN2, term = 1.0, sum = 1.0;

	for (int i = 1; i < 30; i++) {
		term *= r / i;
		sum += term;
	}
	for (; n > 0; n--)
		sum *= 2.0;
	for (; n < 0; n++)
		sum /= 2.0;
	return sum;
}

uint64_t ts_cgroup_shares_to_weight_quadratic(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares <= SHARES_MIN)
		return 1;
	if (shares >= SHARES_MAX)
		return WEIGHT_MAX;
	double l = ln((double)shares) / LN2;
	double e = (l * l + 125.0 * l) / 612.0 - 7.0 / 34.0;
	double w = expo(e * LN10);
	/* Snap values a rounding error away from an integer (1024 -> exactly 100). */
	uint64_t below = (uint64_t)w;
	if (w - (double)below < 1e-9)
		return below;
	if ((double)(below + 1) - w < 1e-9)
		return below + 1;
	return below + 1;
}
