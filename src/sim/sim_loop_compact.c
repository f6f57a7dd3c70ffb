/* The entries' loop variant without classification (sim_loop_choose):
 * plumbgrind's entries walked as they are, a fetch known by its line and
 * the front way of its set (sim_program.c). */
#include <errno.h>
#include <string.h>
#include "sim/sim_engine.h"
#include "sim/sim_loop.h"
#include "sim/sim_mru.h"
#include "sim/sim_program.h"

static __attribute__((noinline)) int compact_other(sim *s, mru_state *m, const sim_op *op, const uint64_t **data,
                                                    uint32_t *thread, size_t index, plumb_status *status)
{
	trace_record r;
	memset(&r, 0, sizeof r);
	r.kind = op->trace_kind;
	r.size = op->size;
	r.thread = *thread;
	r.flags = TRACE_HAS_INSTRUCTION_ADDRESS;
	r.instruction_address = op->address;
	r.address = op->address;
	if (op->trace_kind != TRACE_INSTRUCTION)
		r.address = *(*data)++;
	return sim_mru_special(s, m, &r, index, thread, status);
}

static inline __attribute__((always_inline)) int compact_mru(sim *s, trace_compact *c, plumb_status *status,
                                                             const bool wide)
{
	const sim_program *p = s->program;
	mru_state m;
	memset(&m, 0, sizeof m);
	m.write_back = s->config.cache[SIM_L1D].write_back;
	uint32_t thread = c->thread;
	if (sim_thread_enter(s, thread, &m.core, status) != 0)
		return -1;
	sim_mru_load(s, &m);
	const uint64_t *itags = m.l1[SIM_IFETCH].tags;
	const uint8_t *imeta = m.l1[SIM_IFETCH].meta;
	const uint8_t ineed = m.l1[SIM_IFETCH].need, iwant = m.l1[SIM_IFETCH].want;
	uint64_t counts[SIM_KIND_COUNT] = { 0, 0, 0 }, straddles = 0, records = 0;
	int rc = 0;
	const uint64_t *w = c->words, *end = c->end;
	const size_t definitions = p->definitions;
	while (w < end) {
		/* An unchecked run (trace_compact.unchecked) is checked here, use by
		 * use, as trace_compact_settle checks it: it ends at the first entry
		 * that is not a good use (the reader reports a bad one).  A checked
		 * run never stops here. */
		const uint64_t *entry = w;
		const uint64_t head = w[0];
		const uint32_t id = (uint32_t)head;
		if (__builtin_expect(id >= definitions, 0))
			break;
		const sim_definition def = p->definition[id];
		const uint32_t high = (uint32_t)(head >> 32);
		const uint64_t *d = w + 1, *next = d + (high & 0xff);
		if (__builtin_expect(high != def.head_high || next > end, 0))
			break;
		const sim_op *op = p->ops + def.first, *op_end = op + def.count;
		w = next;
		records += def.records;
		if (__builtin_expect(def.lines != SIM_NO_FAST_FORM, 1)) {
			const sim_fetch_line *fl = p->lines + def.line_first;
			bool at_front = true;
			for (uint32_t i = 0; i < def.lines; i++)
				at_front &= itags[fl[i].front] == fl[i].line && (imeta[fl[i].front] & ineed) == iwant;
			if (__builtin_expect(at_front, 1)) {
				counts[SIM_IFETCH] += def.fetches;
				straddles += def.straddles;
				const sim_data_op *dop = p->data_ops + def.data_first, *dop_end = dop + def.data_ops;
				for (; dop < dop_end; dop++) {
					unsigned kind = dop->kind;
					const mru_l1 *f = &m.l1[kind];
					counts[kind]++;
					uint64_t address = *d;
					d += dop->advance;
					if (__builtin_expect(l1d_hit(f, address, dop->size, wide), 1))
						continue;
					/* not known to be hits any more: one by one after it */
					counts[SIM_IFETCH] -= dop->fetches_after;
					straddles -= dop->straddles_after;
					rc = sim_mru_other(s, &m, (sim_access_kind)kind, address, dop->size);
					if (rc)
						rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
						                (size_t)sim_records_before(c, entry) + dop->index, s->failure);
					op += dop->resume;
					break;
				}
				if (rc)
					break;
				if (dop == dop_end)
					continue;
			}
		}
		for (; op < op_end; op++) {
			unsigned kind = op->kind;
			if (kind == OP_FETCH) {
				size_t front = op->front;
				if (__builtin_expect(itags[front] == op->line && (imeta[front] & ineed) == iwant, 1)) {
					counts[SIM_IFETCH] += 1 + op->repeat;
					op += op->repeat;
					continue;
				}
				counts[SIM_IFETCH]++;
				rc = sim_mru_other(s, &m, SIM_IFETCH, op->address, op->size);
			} else if (kind == OP_FETCH2) {
				/* both lines at the front: mru_straddle's hit, nothing to move */
				size_t front = op->front, front2 = op->front2;
				counts[SIM_IFETCH]++;
				if (__builtin_expect(itags[front] == op->line && itags[front2] == op->line + 1 &&
				                     (imeta[front] & ineed) == iwant && (imeta[front2] & ineed) == iwant, 1)) {
					straddles++;
					continue;
				}
				rc = sim_mru_other(s, &m, SIM_IFETCH, op->address, op->size);
			} else if (kind != OP_OTHER) {
				const mru_l1 *f = &m.l1[kind];
				counts[kind]++;
				uint64_t address = *d;
				d += op->advance;
				if (__builtin_expect(l1d_hit(f, address, op->size, wide), 1))
					continue;
				rc = sim_mru_other(s, &m, (sim_access_kind)kind, address, op->size);
			} else {
				rc = compact_other(s, &m, op, &d, &thread, (size_t)sim_records_before(c, entry) + op->index, status);
				if (rc)
					break;
				continue;
			}
			if (rc) {
				rc = plumb_fail(status, EPROTO, "invariant violated after record %zu: %s",
				                (size_t)sim_records_before(c, entry) + op->index, s->failure);
				break;
			}
		}
		if (rc)
			break;
	}
	if (c->unchecked && rc == 0) {
		/* where the run ends: its uses walked once */
		c->end = w;
		c->records = records;
		c->unchecked = false;
	}
	for (int k = 0; k < SIM_KIND_COUNT; k++)
		m.references[k] += counts[k];
	m.straddles += straddles;
	sim_mru_flush(s, &m);
	return rc;
}

#if SIM_WIDE_SETS
__attribute__((target("avx512f"))) int sim_compact_mru_wide(sim *s, trace_compact *c, plumb_status *status)
{
	return compact_mru(s, c, status, true);
}
#endif

int sim_compact_mru_narrow(sim *s, trace_compact *c, plumb_status *status)
{
	return compact_mru(s, c, status, false);
}

