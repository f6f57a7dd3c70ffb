/* A forward substitution, L x = b, with L lower triangular: each row's
 * inner loop (a dot product of the row with the x found so far) runs once
 * more than the row before, and the row's last step (a division) is a
 * block of its own. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 400;
	double *l = malloc((size_t)n * n * sizeof *l), *x = malloc(n * sizeof *x), *b = malloc(n * sizeof *b);
	if (!l || !x || !b)
		return 1;
	for (int i = 0; i < n; i++) {
		b[i] = i + 1;
		for (int j = 0; j <= i; j++)
			l[(size_t)i * n + j] = (double)(i + n - j + 1) * 2 / n;
	}
	for (int i = 0; i < n; i++) {
		x[i] = b[i];
		for (int j = 0; j < i; j++)
			x[i] -= l[(size_t)i * n + j] * x[j];
		x[i] = x[i] / l[(size_t)i * n + i];
	}
	printf("%g\n", x[n - 1]);
	free(l), free(x), free(b);
	return 0;
}
