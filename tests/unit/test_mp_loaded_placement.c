/* Where plumb loaded puts its latency thread, from the library: the
 * quietest allowed CPU first, the others kept for the generators. */
#include <criterion/criterion.h>
#include <string.h>
#include "core/cpu.h"
#include "loaded/loaded.h"

Test(loaded_placement, one_cpu_has_nothing_to_measure)
{
	int cpus[1] = { 0 };
	char choice[160];
	loaded_place_latency(cpus, 1, 1000000, choice, sizeof choice);
	cr_expect_str_eq(choice, "the only allowed CPU");
	cr_expect_eq(cpus[0], 0);
}

Test(loaded_placement, the_quietest_goes_first_and_no_cpu_is_lost)
{
	int allowed[64];
	plumb_status status;
	int count = cpu_allowed(allowed, 64, &status);
	cr_assert_geq(count, 1, "%s", status.message);
	if (count < 2)
		cr_skip_test("one allowed CPU: nothing to choose between");
	int cpus[64];
	memcpy(cpus, allowed, sizeof(int) * (size_t)count);
	char choice[160];
	loaded_place_latency(cpus, count, 2000000, choice, sizeof choice);
	cr_expect(strncmp(choice, "quietest of ", 12) == 0 ||
	          strcmp(choice, "first allowed CPU (interference not measurable)") == 0, "%s", choice);
	/* the same CPUs, the chosen one first */
	for (int i = 0; i < count; i++) {
		int found = 0;
		for (int j = 0; j < count; j++)
			found += cpus[j] == allowed[i];
		cr_expect_eq(found, 1, "CPU %d", allowed[i]);
	}
}
