#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/parse.h"

static int is_blank(const char *s)
{
	return !s || !*s;
}

/* The first character after leading white space: strtoull and strtol skip
 * it, so a sign is looked for there (" -1" must not wrap to 2^64 - 1). */
static const char *after_spaces(const char *text)
{
	while (isspace((unsigned char)*text))
		text++;
	return text;
}

/* Numbers are decimal unless written 0x: "010" is ten, not eight. */
static int integer_base(const char *digits)
{
	return digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
}

int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty number");
	const char *first = after_spaces(text);
	if (*first == '-' || *first == '+')
		return plumb_fail(status, EINVAL, "'%s' is not a non-negative integer", text);
	char *end;
	errno = 0;
	unsigned long long v = strtoull(first, &end, integer_base(first));
	if (end == first || *end)
		return plumb_fail(status, EINVAL, "'%s' is not an integer", text);
	if (errno == ERANGE || v < min || v > max)
		return plumb_fail(status, ERANGE, "'%s' is out of range [%llu, %llu]", text,
		                  (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

int parse_int(const char *text, long min, long max, long *out, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty number");
	const char *first = after_spaces(text);
	/* An option that cannot be negative takes no sign at all: "+5" and
	 * "-0" are typing slips, not numbers to guess at. */
	if (min >= 0 && (*first == '-' || *first == '+'))
		return plumb_fail(status, EINVAL, "'%s' is not a non-negative integer", text);
	const char *digits = first + (*first == '-' || *first == '+');
	char *end;
	errno = 0;
	long v = strtol(first, &end, integer_base(digits));
	if (end == first || *end || !isxdigit((unsigned char)*digits))
		return plumb_fail(status, EINVAL, "'%s' is not an integer", text);
	if (errno == ERANGE || v < min || v > max)
		return plumb_fail(status, ERANGE, "'%s' is out of range [%ld, %ld]", text, min, max);
	*out = v;
	return 0;
}

int parse_double(const char *text, double min, double max, double *out, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty number");
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end || !isfinite(v))
		return plumb_fail(status, EINVAL, "'%s' is not a number", text);
	if (errno == ERANGE || v < min || v > max)
		return plumb_fail(status, ERANGE, "'%s' is out of range [%g, %g]", text, min, max);
	*out = v;
	return 0;
}

int parse_size(const char *text, uint64_t *out, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty size");
	/* strtod skips leading white space, carriage returns included, so the
	 * sign is looked for after it (the fuzzer found "\r-8K" converted to
	 * an unsigned size: undefined behaviour). */
	const char *first = text;
	while (isspace((unsigned char)*first))
		first++;
	if (*first == '-' || *first == '+')
		return plumb_fail(status, EINVAL, "'%s' is not a size", text);
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || !isfinite(v) || errno == ERANGE)
		return plumb_fail(status, EINVAL, "'%s' is not a size (examples: 4096, 32K, 1MiB, 2G)", text);
	/* Binary multiples only, spelt one way each: K or KiB, in capitals or
	 * all in lower case.  "Kb" (kilobits?) and "KB" (1000 or 1024?) are
	 * refused rather than guessed. */
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1024.0 }, { "KiB", 1024.0 }, { "k", 1024.0 }, { "kib", 1024.0 },
		{ "M", 1048576.0 }, { "MiB", 1048576.0 }, { "m", 1048576.0 }, { "mib", 1048576.0 },
		{ "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "g", 1073741824.0 }, { "gib", 1073741824.0 },
		{ "T", 1099511627776.0 }, { "TiB", 1099511627776.0 }, { "t", 1099511627776.0 }, { "tib", 1099511627776.0 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		double bytes = v * units[i].scale;
		if (bytes >= 18446744073709551616.0)
			return plumb_fail(status, ERANGE, "size '%s' is too large", text);
		if (bytes != floor(bytes))
			return plumb_fail(status, EINVAL, "size '%s' is not a whole number of bytes", text);
		*out = (uint64_t)bytes;
		return 0;
	}
	return plumb_fail(status, EINVAL, "'%s' has an unknown unit (use K, M, G, T or KiB, MiB, GiB, TiB)", text);
}

int parse_list_check(const char *text, size_t longest, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty list");
	size_t length = strlen(text);
	/* the text as far as a message line should show it */
	int shown = length > 60 ? 60 : (int)length;
	const char *more = length > 60 ? "..." : "";
	if (longest && length > longest)
		return plumb_fail(status, E2BIG, "the list '%.*s%s' is longer than %zu characters", shown, text, more, longest);
	if (text[0] == ',' || text[length - 1] == ',' || strstr(text, ",,"))
		return plumb_fail(status, EINVAL, "'%.*s%s' has an empty item (items are separated by single commas)", shown,
		                  text, more);
	return 0;
}

int parse_cpu_list(const char *text, int *cpus, int max, int *n, plumb_status *status)
{
	if (is_blank(text))
		return plumb_fail(status, EINVAL, "empty CPU list");
	int count = 0;
	const char *p = text;
	while (*p) {
		char *end;
		errno = 0;
		/* digits only: strtol would also take white space and a sign ("+1") */
		long first = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
		if (first < 0 || end == p || first > 65535 || errno)
			return plumb_fail(status, EINVAL, "bad CPU list '%s' (example: 0-3,6)", text);
		long last = first;
		p = end;
		if (*p == '-') {
			p++;
			last = isdigit((unsigned char)*p) ? strtol(p, &end, 10) : -1;
			if (last < 0 || end == p || last < first || last > 65535)
				return plumb_fail(status, EINVAL, "bad CPU range in '%s'", text);
			p = end;
		}
		for (long c = first; c <= last; c++) {
			if (count >= max)
				return plumb_fail(status, E2BIG, "CPU list '%s' has more than %d CPUs", text, max);
			for (int i = 0; i < count; i++)
				if (cpus[i] == c)
					return plumb_fail(status, EINVAL, "CPU %ld appears twice in '%s'", c, text);
			cpus[count++] = (int)c;
		}
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return plumb_fail(status, EINVAL, "bad CPU list '%s' (example: 0-3,6)", text);
	}
	*n = count;
	return 0;
}

/* A size as people read it, with a space before the unit as in every
 * table plumb prints ("48 KiB", "23.5 GiB", "100 B"): three significant
 * digits, never an exponent. */
const char *format_size(uint64_t bytes, char *buffer, size_t length)
{
	static const char *names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int unit = 0;
	double v = (double)bytes;
	while (v >= 1024 && unit < 4) {
		v /= 1024;
		unit++;
	}
	if (unit == 0)
		snprintf(buffer, length, "%llu B", (unsigned long long)bytes);
	else if (v == floor(v) || v >= 100)
		snprintf(buffer, length, "%.0f %s", v, names[unit]);
	else
		snprintf(buffer, length, "%.3g %s", v, names[unit]);
	return buffer;
}

int parse_command_line(const char *text, char ***argv, size_t *argc, plumb_status *status)
{
	*argv = NULL;
	*argc = 0;
	size_t length = strlen(text);
	/* Words take at most the text's bytes and a terminator each; the
	 * pointers (at most length / 2 + 2 words) go first. */
	size_t most = length / 2 + 2;
	char **words = malloc(most * sizeof *words + length + most);
	if (!words)
		return plumb_fail_errno(status, ENOMEM, "command line");
	char *out = (char *)(words + most);
	size_t n = 0;
	const char *p = text;
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		words[n++] = out;
		bool start = true;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			char c = *p;
			if (c == '\'') {
				const char *end = strchr(p + 1, '\'');
				if (!end) {
					free(words);
					return plumb_fail(status, EINVAL, "'%s': a ' is not closed", text);
				}
				memcpy(out, p + 1, (size_t)(end - p - 1));
				out += end - p - 1;
				p = end + 1;
			} else if (c == '"') {
				for (p++; *p != '"'; p++) {
					if (!*p) {
						free(words);
						return plumb_fail(status, EINVAL, "'%s': a \" is not closed", text);
					}
					if (*p == '$' || *p == '`') {
						free(words);
						return plumb_fail(status, EINVAL, "'%s': %c inside \"...\" would be expanded by a shell, "
						                  "and no shell runs this command: write it inside '...'", text, *p);
					}
					if (*p == '\\' && p[1] == '\n') {
						p++;
						continue;
					}
					if (*p == '\\' && (p[1] == '"' || p[1] == '\\' || p[1] == '$' || p[1] == '`'))
						p++;
					*out++ = *p;
				}
				p++;
			} else if (c == '\\') {
				if (!p[1]) {
					free(words);
					return plumb_fail(status, EINVAL, "'%s': a \\ ends it", text);
				}
				if (p[1] != '\n')
					*out++ = p[1];
				p += 2;
			} else if (strchr("|&;<>()$`*?[", c) || (start && (c == '#' || c == '~'))) {
				free(words);
				return plumb_fail(status, EINVAL, "'%s': %c means something to a shell, and no shell runs this "
				                  "command: quote it ('%c') to pass it as it is", text, c, c);
			} else {
				*out++ = c;
				p++;
			}
			start = false;
		}
		*out++ = 0;
	}
	if (n == 0) {
		free(words);
		return plumb_fail(status, EINVAL, "no command: the text is empty");
	}
	words[n] = NULL;
	*argv = words;
	*argc = n;
	return 0;
}
