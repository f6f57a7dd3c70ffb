/* State preparations as data (seed 001 section 4.1).  Each recipe ends
 * with the target lines in the intended state whatever they were before,
 * because the first step by B is a write (which invalidates every other
 * copy, including A's from the previous timed pass) or a flush. */
#include <errno.h>
#include "coherence/coherence.h"

static void add_step(coherence_plan *plan, int role, coherence_op op)
{
	plan->steps[plan->count++] = (coherence_step){ .role = (uint16_t)role, .op = (uint8_t)op };
}

int coherence_state_roles(coherence_state state, int sharers)
{
	switch (state) {
	case COHERENCE_LOCAL: return 1;
	case COHERENCE_MODIFIED:
	case COHERENCE_EXCLUSIVE:
	case COHERENCE_INVALID: return 2;
	case COHERENCE_SHARED: return 2 + sharers;
	case COHERENCE_CLEAN_SHARED: return 1 + sharers;
	}
	return 0;
}

int coherence_plan_build(coherence_state state, int sharers, coherence_plan *out, plumb_status *status)
{
	*out = (coherence_plan){ .state = state, .sharers = sharers };
	switch (state) {
	case COHERENCE_LOCAL:
		/* A's own writes: the baseline every remote state is compared with. */
		add_step(out, 0, COHERENCE_OP_WRITE);
		out->sharers = 0;
		break;
	case COHERENCE_MODIFIED:
		/* "P1 simply writes the data to be accessed by M." */
		add_step(out, 1, COHERENCE_OP_WRITE);
		out->sharers = 0;
		break;
	case COHERENCE_EXCLUSIVE:
		/* Write (takes the lines from everyone), flush (clean, in memory
		 * only), read (B alone has a clean copy: Exclusive).  The thesis
		 * wrote an L2-sized array to evict; clflush does it exactly. */
		add_step(out, 1, COHERENCE_OP_WRITE);
		add_step(out, 1, COHERENCE_OP_FLUSH);
		add_step(out, 1, COHERENCE_OP_READ);
		out->sharers = 0;
		break;
	case COHERENCE_INVALID:
		/* Write (removes A's copy), flush: nobody caches the lines. */
		add_step(out, 1, COHERENCE_OP_WRITE);
		add_step(out, 1, COHERENCE_OP_FLUSH);
		out->sharers = 0;
		break;
	case COHERENCE_SHARED:
		/* "P1 first writes M's data ... Subsequently, P2, P3, etc. read it."
		 * On MOESI machines (AMD) B may keep the line Owned (dirty, shared). */
		if (sharers < 1 || sharers > COHERENCE_MAX_ROLES - 2)
			return plumb_fail(status, EINVAL, "shared state: further sharers must be 1..%d, got %d",
			                  COHERENCE_MAX_ROLES - 2, sharers);
		add_step(out, 1, COHERENCE_OP_WRITE);
		for (int r = 2; r < 2 + sharers; r++)
			add_step(out, r, COHERENCE_OP_READ);
		break;
	case COHERENCE_CLEAN_SHARED:
		/* k clean copies and no dirty owner, so a store by A pays for
		 * invalidating exactly k copies and no writeback. */
		if (sharers < 1 || sharers > COHERENCE_MAX_ROLES - 1)
			return plumb_fail(status, EINVAL, "clean-shared state: copies must be 1..%d, got %d",
			                  COHERENCE_MAX_ROLES - 1, sharers);
		add_step(out, 1, COHERENCE_OP_WRITE);
		add_step(out, 1, COHERENCE_OP_FLUSH);
		for (int r = 1; r <= sharers; r++)
			add_step(out, r, COHERENCE_OP_READ);
		break;
	default:
		return plumb_fail(status, EINVAL, "unknown coherence state %d", (int)state);
	}
	out->roles = coherence_state_roles(state, out->sharers);
	return 0;
}

const char *coherence_state_name(coherence_state state)
{
	static const char *const names[] = { "local", "M", "E", "S", "I", "clean-shared" };
	return (unsigned)state < COHERENCE_STATE_COUNT ? names[state] : "?";
}

const char *coherence_state_description(coherence_state state)
{
	static const char *const text[] = {
		"A's own cache (A wrote the lines)",
		"Modified in B (B wrote)",
		"Exclusive in B (B wrote, flushed, read)",
		"Shared by B and further sharers (B wrote, they read)",
		"in no cache (B wrote, flushed)",
		"clean copies in k cores (write, flush, k reads)",
	};
	return (unsigned)state < COHERENCE_STATE_COUNT ? text[state] : "?";
}

const char *coherence_access_name(coherence_access access)
{
	static const char *const names[] = { "load", "store", "atomic-add", "cas" };
	return (unsigned)access < COHERENCE_ACCESS_COUNT ? names[access] : "?";
}
