/* The load generators' inner loop.  Streams are sequential on purpose:
 * like Intel MLC's generators, they let the hardware prefetchers run at
 * full rate, so a delay of 0 saturates the memory path; the delay loop
 * (dependent register adds the compiler cannot remove or vectorise) then
 * spaces the accesses out to lower the injection rate. */
#include <string.h>
#include "loaded/loaded.h"

static inline uint64_t delay_loop(uint64_t value, unsigned delay)
{
	for (unsigned i = 0; i < delay; i++)
		__asm__ __volatile__("add $1, %0" : "+r"(value));
	return value;
}

uint64_t loaded_generate(loaded_pattern pattern, uint8_t *buffer, size_t buffer_lines, size_t line_bytes,
                         size_t *position, size_t lines, unsigned delay)
{
	uint64_t sum = 0;
	size_t p = *position;
	for (size_t i = 0; i < lines; i++) {
		volatile uint64_t *line = (volatile uint64_t *)(buffer + p * line_bytes);
		bool store = pattern == LOADED_WRITE || (pattern == LOADED_MIXED && (p & 1));
		if (store)
			*line = sum;
		else
			sum += *line;
		sum = delay_loop(sum, delay);
		if (++p == buffer_lines)
			p = 0;
	}
	*position = p;
	return sum;
}

const char *loaded_pattern_name(loaded_pattern pattern)
{
	return pattern == LOADED_READ ? "read" : pattern == LOADED_WRITE ? "write" : "mixed";
}

int loaded_pattern_parse(const char *text, loaded_pattern *out)
{
	if (!strcmp(text, "read"))
		*out = LOADED_READ;
	else if (!strcmp(text, "write"))
		*out = LOADED_WRITE;
	else if (!strcmp(text, "mixed"))
		*out = LOADED_MIXED;
	else
		return -1;
	return 0;
}
