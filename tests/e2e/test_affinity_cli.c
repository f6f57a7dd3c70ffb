/* Every command that pins threads honours the affinity mask it was started
 * with (taskset, a container's cpuset): a CPU outside it is refused with one
 * line naming the CPU and the allowed set.  `taskset -c 0 plumb lat --cpu 1`
 * once ran on CPU 1.  The test process restricts its own mask, which the
 * plumb it starts inherits. */
#include <criterion/criterion.h>
#include <json-c/json.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include "run.h"

/* Restricts this test process to its first allowed CPU; *outside is another
 * CPU the machine has.  Skips with the reason when there is only one. */
static void one_cpu_mask(int *inside, int *outside)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	*inside = *outside = -1;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (*inside < 0)
				*inside = c;
			else if (*outside < 0)
				*outside = c;
		}
	if (*outside < 0)
		cr_skip_test("this process may run on one CPU only: no CPU outside a one-CPU mask to ask for");
	CPU_ZERO(&set);
	CPU_SET(*inside, &set);
	cr_assert_eq(sched_setaffinity(0, sizeof set, &set), 0);
}

static void refused(const char *command, const char *option, int inside, int outside, const char *const argv[])
{
	cli_run r = cli_run_plumb(NULL, argv);
	cli_assert_usage_error(&r, command);
	char expected[512];
	snprintf(expected, sizeof expected,
	         "plumb %s: %s: CPU %d is not one this process may run on (allowed: %d) (see 'plumb %s --help')\n",
	         command, option, outside, inside, command);
	cr_assert_str_eq(r.err, expected);
	cli_run_free(&r);
}

Test(affinity_cli, a_cpu_outside_the_starting_mask_is_refused_by_every_command)
{
	int inside, outside;
	one_cpu_mask(&inside, &outside);
	char in[16], out[16], both[40], pair[40];
	snprintf(in, sizeof in, "%d", inside);
	snprintf(out, sizeof out, "%d", outside);
	snprintf(both, sizeof both, "%d,%d", inside, outside);
	snprintf(pair, sizeof pair, "%d,%d", inside, outside);
	refused("lat", "--cpu", inside, outside, (const char *const[]){ "lat", "--cpu", out, NULL });
	refused("bw", "--cpu", inside, outside, (const char *const[]){ "bw", "--cpu", both, NULL });
	refused("c2c", "--cpu", inside, outside, (const char *const[]){ "c2c", "--cpu", both, NULL });
	refused("c2c", "--pair", inside, outside, (const char *const[]){ "c2c", "--cpu", in, "--pair", pair, NULL });
	refused("loaded", "--cpu", inside, outside, (const char *const[]){ "loaded", "--cpu", both, NULL });
	refused("geometry", "--cpu", inside, outside, (const char *const[]){ "geometry", "--cpu", out, NULL });
	refused("validate", "--cpu", inside, outside,
	        (const char *const[]){ "validate", "--backend", "sim", "--cpu", out, "--no-record", NULL });
}

/* The CPU asked for inside the mask is the one measured on, and without
 * --cpu lat stays inside the mask. */
Test(affinity_cli, lat_runs_on_a_cpu_inside_the_mask)
{
	int inside, outside;
	one_cpu_mask(&inside, &outside);
	char in[16];
	snprintf(in, sizeof in, "%d", inside);
	for (int with_cpu = 0; with_cpu < 2; with_cpu++) {
		cli_run r = with_cpu ? cli_run_plumbv(NULL, "lat", "--cpu", in, "--min", "4K", "--max", "8K",
		                                      "--points-per-octave", "1", "--time-cap", "1", "--json", NULL)
		                     : cli_run_plumbv(NULL, "lat", "--min", "4K", "--max", "8K", "--points-per-octave", "1",
		                                      "--time-cap", "1", "--json", NULL);
		cr_assert_eq(r.exit_code, 0, "%s", r.err);
		json_object *root = json_tokener_parse(r.out), *meta, *cpu;
		cr_assert_not_null(root, "%s", r.out);
		cr_assert(json_object_object_get_ex(root, "meta", &meta) && json_object_object_get_ex(meta, "cpu", &cpu));
		cr_assert_eq(json_object_get_int(cpu), inside);
		json_object_put(root);
		cli_run_free(&r);
	}
}
