/* plumbgrind's definitions made into ops once (sim_program.h), for the
 * entries' loops. */
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include "sim/sim_loop.h"
#include "sim/sim_mru.h"
#include "sim/sim_program.h"

void sim_program_free(struct sim_program *p)
{
	if (!p)
		return;
	free(p->ops);
	free(p->definition);
	free(p->lines);
	free(p->data_ops);
	free(p);
}

static bool add_line(sim_program *p, sim_definition *def, uint64_t line, uint32_t front)
{
	sim_fetch_line *lines = p->lines + def->line_first;
	for (uint32_t i = 0; i < def->lines; i++) {
		if (lines[i].line == line)
			return true;
		if (lines[i].front == front)
			return false;   /* two lines of one set are never both at the front */
	}
	if (def->lines == SIM_NO_FAST_FORM - 1)
		return false;   /* more than its count holds (a made-up trace) */
	lines[def->lines++] = (sim_fetch_line){ .line = line, .front = front };
	return true;
}

/* The capacity a program's array of `capacity` elements grows to so that it
 * holds `need`: doubled (from `first`) until it does. */
static size_t grown_capacity(size_t capacity, size_t need, size_t first)
{
	size_t grown = capacity ? 2 * capacity : first;
	while (grown < need)
		grown *= 2;
	return grown;
}

void sim_classify_masks(const sim *s, unsigned kind, uint8_t *need, uint8_t *want, uint8_t *dirty)
{
	sim_mru_masks((sim_access_kind)kind, s->config.cache[SIM_L1D].write_back, need, want, dirty);
	if (kind == SIM_WRITE && sim_every_write_general(s)) {
		*need = 0;
		*want = 1;
	}
}


/* The definition's fast form (sim_fetch_line), or SIM_NO_FAST_FORM when it
 * has an op the entries' loops (sim_loop_compact.c) do not take or fetch lines that cannot all
 * be at the front.  -1: out of memory. */
static int fast_form(const sim *s, sim_program *p, sim_definition *def, const sim_op *ops, size_t made)
{
	if (p->line_count + 2 * made > p->line_capacity) {
		size_t capacity = grown_capacity(p->line_capacity, p->line_count + 2 * made, 16384);
		sim_fetch_line *lines = realloc(p->lines, capacity * sizeof *lines);
		if (!lines)
			return -1;
		p->lines = lines;
		p->line_capacity = capacity;
	}
	if (p->data_op_count + made > p->data_op_capacity) {
		size_t capacity = grown_capacity(p->data_op_capacity, p->data_op_count + made, 16384);
		sim_data_op *data_ops = realloc(p->data_ops, capacity * sizeof *data_ops);
		if (!data_ops)
			return -1;
		p->data_ops = data_ops;
		p->data_op_capacity = capacity;
	}
	if (p->line_count + 2 * made > UINT32_MAX || p->data_op_count + made > UINT32_MAX)
		return -1;
	def->line_first = (uint32_t)p->line_count;
	def->data_first = (uint32_t)p->data_op_count;
	def->lines = def->data_ops = 0;
	def->fetches = def->straddles = 0;
	bool fast = made < 256;
	for (size_t i = 0; i < made && fast; i++) {
		const sim_op *op = &ops[i];
		if (op->kind == OP_FETCH) {
			fast = add_line(p, def, op->line, op->front);
			def->fetches++;
		} else if (op->kind == OP_FETCH2) {
			fast = add_line(p, def, op->line, op->front) && add_line(p, def, op->line + 1, op->front2);
			def->fetches++;
			def->straddles++;
		} else if (op->kind == OP_READ || op->kind == OP_WRITE) {
			sim_data_op *d = &p->data_ops[p->data_op_count + def->data_ops++];
			*d = (sim_data_op){
				.size = op->size, .kind = op->kind, .advance = op->advance, .index = op->index,
				.resume = (uint16_t)(i + 1), .fetches_after = def->fetches, .straddles_after = def->straddles,
			};
			sim_classify_masks(s, op->kind, &d->need, &d->want, &d->dirty);
		} else {
			fast = false;
		}
	}
	if (!fast) {
		def->lines = SIM_NO_FAST_FORM;
		def->data_ops = 0;
		return 0;
	}
	/* the distinct lines again, in the order of their last fetches: walked
	 * from the end, a line's first fetch found is its last */
	uint64_t recent[256];
	uint32_t placed = def->lines;
	for (size_t i = made; i-- > 0 && placed > 0;) {
		const sim_op *op = &ops[i];
		if (op->kind != OP_FETCH && op->kind != OP_FETCH2)
			continue;
		/* a fetch across two lines touches its first line, then the second */
		for (uint64_t line = op->line + (op->kind == OP_FETCH2); ; line--) {
			bool known = false;
			for (uint32_t j = placed; j < def->lines; j++)
				known |= recent[j] == line;
			if (!known)
				recent[--placed] = line;
			if (line == op->line)
				break;
		}
	}
	/* in that order, each with its set's front way */
	sim_fetch_line *lines = p->lines + def->line_first, ordered[256];
	for (uint32_t j = 0; j < def->lines; j++)
		for (uint32_t i = 0; i < def->lines; i++)
			if (lines[i].line == recent[j])
				ordered[j] = lines[i];
	memcpy(lines, ordered, def->lines * sizeof *lines);
	if (def->lines) {
		def->line = lines[0].line;
		def->front = lines[0].front;
	}
	/* fetches after each data op: the definition's less those before it */
	for (uint32_t i = 0; i < def->data_ops; i++) {
		sim_data_op *d = &p->data_ops[p->data_op_count + i];
		d->fetches_after = (uint16_t)(def->fetches - d->fetches_after);
		d->straddles_after = (uint16_t)(def->straddles - d->straddles_after);
	}
	p->line_count += def->lines;
	p->data_op_count += def->data_ops;
	return 0;
}

static int program_define(sim *s, sim_program *p, const trace_record *t, size_t n)
{
	if (p->definitions == p->capacity) {
		size_t capacity = grown_capacity(p->capacity, p->definitions + 1, 4096);
		sim_definition *definition = realloc(p->definition, capacity * sizeof *definition);
		if (!definition)
			return -1;
		p->definition = definition;
		p->capacity = capacity;
	}
	if (p->op_count + 2 * n > p->op_capacity) {
		size_t capacity = grown_capacity(p->op_capacity, p->op_count + 2 * n, 65536);
		sim_op *ops = realloc(p->ops, capacity * sizeof *ops);
		if (!ops)
			return -1;
		p->ops = ops;
		p->op_capacity = capacity;
	}
	if (p->op_count + 2 * n > UINT32_MAX)
		return -1;
	const sim_cache *l1i = &s->core[0].cache[SIM_L1I];
	const uint32_t max_size = s->config.max_access_size;
	const sim_modify modify = s->config.modify;
	sim_op *ops = p->ops + p->op_count;
	size_t made = 0;
	for (size_t i = 0; i < n; i++) {
		const trace_record *r = &t[i];
		sim_op *op = &ops[made++];
		uint32_t size = r->size;
		if (max_size && size > max_size)
			size = max_size;
		op->size = (uint16_t)size;
		op->trace_kind = r->kind;
		op->repeat = 0;
		op->line = 0;
		op->front = op->front2 = 0;
		op->advance = 1;
		op->index = (uint8_t)i;
		op->address = r->kind == TRACE_INSTRUCTION ? r->address : r->instruction_address;
		if (r->kind == TRACE_INSTRUCTION) {
			uint64_t line = r->address >> l1i->line_bits;
			op->kind = OP_OTHER;
			if (size != 0 && r->address + size - 1 >= r->address &&
			    ((r->address + size - 1) >> l1i->line_bits) == line) {
				op->kind = OP_FETCH;
				op->line = line;
				op->front = (uint32_t)((line & l1i->set_mask) * l1i->assoc);
				/* the fetches of this line right before it: one more each */
				for (size_t j = made - 1; j-- > 0 && ops[j].kind == OP_FETCH && ops[j].line == line;)
					ops[j].repeat++;
			} else if (size != 0 && r->address + size - 1 >= r->address &&
			           ((r->address + size - 1) >> l1i->line_bits) == line + 1 && l1i->set_mask != 0) {
				op->kind = OP_FETCH2;
				op->line = line;
				op->front = (uint32_t)((line & l1i->set_mask) * l1i->assoc);
				op->front2 = (uint32_t)(((line + 1) & l1i->set_mask) * l1i->assoc);
			}
		} else if ((r->kind == TRACE_READ || r->kind == TRACE_WRITE) && size != 0) {
			op->kind = r->kind == TRACE_READ ? OP_READ : OP_WRITE;
		} else if (r->kind == TRACE_MODIFY && size != 0) {
			op->kind = modify == SIM_MODIFY_WRITE ? OP_WRITE : OP_READ;
			if (modify == SIM_MODIFY_READ_WRITE) {
				/* the read, then the write of the same word */
				op->advance = 0;
				ops[made] = *op;
				ops[made].kind = OP_WRITE;
				ops[made].advance = 1;
				made++;
			}
		} else {
			op->kind = OP_OTHER;
			op->size = r->size;   /* mru_special cuts it */
		}
	}
	sim_definition *def = &p->definition[p->definitions];
	def->first = (uint32_t)p->op_count;
	def->count = (uint32_t)made;
	if (fast_form(s, p, def, ops, made) != 0)
		return -1;
	p->op_count += made;
	p->definitions++;
	return 0;
}

int sim_program_update(sim *s, const trace_compact *c, plumb_status *status)
{
	sim_program *p = s->program;
	if (!p && !(p = s->program = calloc(1, sizeof *p)))
		return plumb_fail_errno(status, ENOMEM, "simulator: plumbgrind's definitions");
	if (p->stream != c->stream || c->definitions < p->definitions) {
		/* another stream: start again */
		p->stream = c->stream;
		p->definitions = 0;
		p->op_count = 0;
		p->line_count = 0;
		p->data_op_count = 0;
	}
	while (p->definitions < c->definitions) {
		size_t d = p->definitions;
		if (c->count[d] == 0 || program_define(s, p, c->templates + c->first[d], c->count[d]) != 0)
			return plumb_fail_errno(status, ENOMEM, "simulator: plumbgrind's definitions");
		p->definition[d].data_words = c->data[d];
		p->definition[d].head_high = (uint32_t)(TRACE_COMPACT_USE_HIGH << 8 | c->data[d]);
		p->definition[d].records = c->count[d];
	}
	return 0;
}

uint64_t sim_records_before(const trace_compact *c, const uint64_t *entry)
{
	uint64_t n = 0;
	for (const uint64_t *w = c->words; w < entry; w += 1 + sim_use_data(w[0]))
		n += c->count[(uint32_t)w[0]];
	return n;
}

