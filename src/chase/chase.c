/* Pointer-chase chains and the plain dependent-load loop (see src/chase/chase.h). */
#include <errno.h>
#include <stdlib.h>
#include "chase/chase.h"
#include "chase/permutation.h"

/* mixer == NULL: every pointer at offset; else slot x's at word mixer[x % 64]. */
static int build_chain(chase_chain *chain, void *base, size_t capacity, size_t slot_bytes, size_t offset,
                       const uint32_t *mixer, const uint32_t *order, size_t count, plumb_status *status);

int chase_build(chase_chain *chain, void *base, size_t capacity, size_t slot_bytes, size_t offset,
                const uint32_t *order, size_t count, plumb_status *status)
{
	return build_chain(chain, base, capacity, slot_bytes, offset, NULL, order, count, status);
}

static size_t offset_of(size_t slot, size_t offset, const uint32_t *mixer)
{
	return mixer ? (size_t)mixer[slot % PERMUTATION_MIXER_SLOTS] * sizeof(void *) : offset;
}

static int build_chain(chase_chain *chain, void *base, size_t capacity, size_t slot_bytes, size_t offset,
                       const uint32_t *mixer, const uint32_t *order, size_t count, plumb_status *status)
{
	if (!base || !order)
		return plumb_fail(status, EINVAL, "chase_build needs memory and a visit order");
	if (slot_bytes < sizeof(void *))
		return plumb_fail(status, EINVAL, "a slot of %zu bytes cannot hold a pointer", slot_bytes);
	if (offset % sizeof(void *) != 0 || offset + sizeof(void *) > slot_bytes)
		return plumb_fail(status, EINVAL, "pointer offset %zu does not fit an aligned pointer in a %zu-byte slot",
		                  offset, slot_bytes);
	if (count == 0 || count > PERMUTATION_MAX_COUNT)
		return plumb_fail(status, EINVAL, "a chain of %zu slots is not supported", count);
	if (count > capacity / slot_bytes)
		return plumb_fail(status, EINVAL, "%zu slots of %zu bytes do not fit in %zu bytes", count, slot_bytes,
		                  capacity);
	char *b = base;
	for (size_t i = 0; i < count; i++) {
		size_t next = i + 1 == count ? 0 : i + 1;
		if (order[i] >= count)
			return plumb_fail(status, EINVAL, "visit order names slot %u of %zu", order[i], count);
		void **slot = (void **)(b + (size_t)order[i] * slot_bytes + offset_of(order[i], offset, mixer));
		*slot = b + (size_t)order[next] * slot_bytes + offset_of(order[next], offset, mixer);
	}
	chain->start = b + (size_t)order[0] * slot_bytes + offset_of(order[0], offset, mixer);
	chain->length = count;
	chain->slot_bytes = slot_bytes;
	chain->offset = offset_of(order[0], offset, mixer);
	chain->footprint = count * slot_bytes;
	return 0;
}

const char *chase_pattern_name(chase_pattern pattern)
{
	switch (pattern) {
	case CHASE_RANDOM: return "random";
	case CHASE_PAGE_GROUPED: return "page-grouped";
	case CHASE_STRIDED: return "strided";
	case CHASE_LMBENCH: return "lmbench-line";
	case CHASE_BACKWARD: return "lmbench2";
	case CHASE_MULTICHASE: return "multichase";
	case CHASE_FORWARD: return "lmbench";
	case CHASE_LMBENCH_THRASH: return "lmbench-thrash";
	}
	return "unknown";
}

int chase_build_layout(chase_chain *chain, void *base, size_t capacity, const chase_layout *layout,
                       plumb_status *status)
{
	size_t slot = layout->slot_bytes;
	if (slot < sizeof(void *))
		return plumb_fail(status, EINVAL, "a slot of %zu bytes cannot hold a pointer", slot);
	size_t count = layout->bytes / slot;
	if (count == 0)
		return plumb_fail(status, EINVAL, "a working set of %zu bytes holds no %zu-byte slot", layout->bytes, slot);
	if (count > PERMUTATION_MAX_COUNT)
		return plumb_fail(status, EINVAL, "a working set of %zu bytes is too large", layout->bytes);
	uint32_t *order = malloc(count * sizeof *order);
	if (!order)
		return plumb_fail_errno(status, ENOMEM, "cannot allocate a visit order of %zu slots", count);
	int rc;
	uint32_t mixer[PERMUTATION_MIXER_SLOTS];
	bool mixed = false;
	switch (layout->pattern) {
	case CHASE_RANDOM:
		rc = permutation_random(order, count, layout->seed, status);
		break;
	case CHASE_PAGE_GROUPED:
		if (layout->page_bytes < slot || layout->page_bytes % slot != 0) {
			rc = plumb_fail(status, EINVAL, "page size %zu is not a multiple of the %zu-byte slot",
			                layout->page_bytes, slot);
			break;
		}
		rc = permutation_page_grouped(order, count, layout->page_bytes / slot, layout->seed, status);
		break;
	case CHASE_STRIDED:
		if (layout->stride_bytes < slot || layout->stride_bytes % slot != 0) {
			rc = plumb_fail(status, EINVAL, "stride %zu is not a multiple of the %zu-byte slot",
			                layout->stride_bytes, slot);
			break;
		}
		rc = permutation_strided(order, count, layout->stride_bytes / slot, status);
		break;
	case CHASE_LMBENCH:
		if (layout->page_bytes < slot || layout->page_bytes % slot != 0) {
			rc = plumb_fail(status, EINVAL, "page size %zu is not a multiple of the %zu-byte slot",
			                layout->page_bytes, slot);
			break;
		}
		rc = permutation_lmbench(order, count, layout->page_bytes / slot, layout->seed, status);
		break;
	case CHASE_BACKWARD:
		rc = permutation_backward(order, count, status);
		break;
	case CHASE_FORWARD:
		rc = permutation_strided(order, count, 1, status);
		break;
	case CHASE_LMBENCH_THRASH:
		if (layout->page_bytes < slot || layout->page_bytes % slot != 0) {
			rc = plumb_fail(status, EINVAL, "page size %zu is not a multiple of the %zu-byte slot",
			                layout->page_bytes, slot);
			break;
		}
		rc = permutation_lmbench_thrash(order, count, layout->page_bytes / slot, layout->seed, status);
		break;
	case CHASE_MULTICHASE:
		if (layout->page_bytes < slot || layout->page_bytes % slot != 0) {
			rc = plumb_fail(status, EINVAL, "group size %zu is not a multiple of the %zu-byte slot",
			                layout->page_bytes, slot);
			break;
		}
		rc = permutation_page_grouped(order, count, layout->page_bytes / slot, layout->seed, status);
		if (rc == 0)
			rc = permutation_word_mixer(mixer, slot / sizeof(void *), layout->seed, status);
		mixed = true;
		break;
	default:
		rc = plumb_fail(status, EINVAL, "unknown chase pattern %d", (int)layout->pattern);
	}
	if (rc == 0)
		rc = build_chain(chain, base, capacity, slot, layout->offset, mixed ? mixer : NULL, order, count, status);
	free(order);
	return rc;
}

size_t chase_cycle_length(const chase_chain *chain, size_t limit)
{
	void *const *p = chain->start;
	for (size_t steps = 1; steps <= limit; steps++) {
		p = *p;
		if (p == chain->start)
			return steps;
	}
	return 0;
}

/* One step of the chase: the next address is the loaded value. */
#define CHASE_STEP(p) ((p) = *(void *const *)(p))
#define CHASE_STEP4(p) CHASE_STEP(p); CHASE_STEP(p); CHASE_STEP(p); CHASE_STEP(p)

void *chase_run(void *position, size_t loads)
{
	void *p = position;
	for (size_t blocks = loads / 16; blocks; blocks--) {
		CHASE_STEP4(p);
		CHASE_STEP4(p);
		CHASE_STEP4(p);
		CHASE_STEP4(p);
	}
	for (size_t rest = loads % 16; rest; rest--)
		CHASE_STEP(p);
	return p;
}

uint64_t chase_time_ticks(const timer_calibration *timer, void **position, size_t loads)
{
	uint64_t begin = timer_begin(timer);
	void *end = chase_run(*position, loads);
	uint64_t stop = timer_end(timer);
	*position = end;
	return stop - begin;
}

int chase_spread_positions(const chase_chain *chain, void **positions, size_t count, plumb_status *status)
{
	if (count == 0 || chain->length < count)
		return plumb_fail(status, EINVAL, "a chain of %zu slots cannot carry %zu walkers", chain->length, count);
	void *p = chain->start;
	size_t at = 0;
	for (size_t k = 0; k < count; k++) {
		size_t target = chain->length / count * k;
		p = chase_run(p, target - at);
		at = target;
		positions[k] = p;
	}
	return 0;
}
