/* Fuzzes the parsers of the values users type (src/core/parse.c): the
 * first byte picks the parser, the rest is the text.  Any text must be
 * refused with one line, or read as exactly what it says: no sign for an
 * unsigned value (also after white space), decimal unless written 0x (so
 * "010" is ten), a size's unit one of the binary multiples plumb names;
 * a command line split into words as a shell quotes, nothing expanded.
 * Issue 29 ("silently wrong numbers") is what this holds in place. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/parse.h"

static void refused_with_one_line(const plumb_status *status)
{
	if (!status->message[0] || strchr(status->message, '\n'))
		abort();
}

/* The value of text read as plumb's rule says, or -1 when that rule cannot
 * tell (overflow: the parser must then refuse). */
static int expected_integer(const char *text, uint64_t *out)
{
	while (isspace((unsigned char)*text))
		text++;
	unsigned base = 10;
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		base = 16;
		text += 2;
	}
	uint64_t v = 0;
	if (!*text)
		return -1;
	for (; *text; text++) {
		int digit = isdigit((unsigned char)*text) ? *text - '0'
		            : base == 16 && isxdigit((unsigned char)*text) ? tolower((unsigned char)*text) - 'a' + 10 : -1;
		if (digit < 0)
			return -1;
		if (v > (UINT64_MAX - (uint64_t)digit) / base)
			return -1;
		v = v * base + (uint64_t)digit;
	}
	*out = v;
	return 0;
}

static int has_sign(const char *text)
{
	return strchr(text, '-') || strchr(text, '+');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256)
		return 0;
	char text[258];
	memcpy(text, data + 1, size - 1);
	text[size - 1] = 0;
	if (strlen(text) != size - 1)
		return 0;   /* a C string ends at its first NUL: nothing to test past it */
	plumb_status status;
	memset(&status, 0, sizeof status);
	switch (data[0] % 5) {
	case 0: {
		uint64_t v = 12345, want;
		if (parse_u64(text, 0, UINT64_MAX, &v, &status) == 0) {
			if (has_sign(text) || expected_integer(text, &want) != 0 || v != want)
				abort();
		} else {
			refused_with_one_line(&status);
			if (v != 12345)
				abort();   /* a refused number is not stored */
		}
		break;
	}
	case 1: {
		long v;
		if (parse_int(text, -1000000, 1000000, &v, &status) == 0) {
			const char *p = text;
			while (isspace((unsigned char)*p))
				p++;
			int negative = *p == '-';
			p += *p == '-' || *p == '+';
			uint64_t want;
			if (expected_integer(p, &want) != 0 || (negative ? -(long)want : (long)want) != v)
				abort();
		} else {
			refused_with_one_line(&status);
		}
		break;
	}
	case 2: {
		uint64_t v;
		if (parse_size(text, &v, &status) == 0) {
			if (has_sign(text) && !strpbrk(text, "eEpP"))
				abort();   /* a sign only inside an exponent */
			const char *p = text;
			while (*p && (isdigit((unsigned char)*p) || strchr(" \t\n\v\f\r.xX+-eEpP", *p) ||
			              isxdigit((unsigned char)*p)))
				p++;
			static const char *const units[] = { "", "B", "K", "KiB", "k", "kib", "M", "MiB", "m", "mib",
			                                     "G", "GiB", "g", "gib", "T", "TiB", "t", "tib" };
			int known = 0;
			/* The unit is a suffix of the text that the table names. */
			for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
				size_t n = strlen(units[i]), length = strlen(text);
				if (length >= n && !strcmp(text + length - n, units[i]))
					known = 1;
			}
			if (!known)
				abort();
		} else {
			refused_with_one_line(&status);
		}
		break;
	}
	case 3: {
		int cpus[64], n = 0;
		if (parse_cpu_list(text, cpus, 64, &n, &status) == 0) {
			if (n < 1 || n > 64 || strchr(text, '+'))
				abort();
			for (int i = 0; i < n; i++)
				if (cpus[i] < 0 || cpus[i] > 65535)
					abort();
		} else {
			refused_with_one_line(&status);
		}
		break;
	}
	case 4: {
		/* plumb report --program: words as a shell quotes them, nothing
		 * a shell would expand passed on */
		char **argv = (char **)&status;
		size_t argc = 99;
		if (parse_command_line(text, &argv, &argc, &status) == 0) {
			size_t total = 0;
			if (argc < 1 || !argv || argv[argc])
				abort();
			for (size_t i = 0; i < argc; i++)
				total += strlen(argv[i]);
			if (total > strlen(text))
				abort();
			if (!strpbrk(text, "'\"\\")) {
				/* unquoted: the words are the blank-separated pieces, and none
				 * holds what a shell would act on */
				char copy[258];
				memcpy(copy, text, strlen(text) + 1);
				size_t i = 0;
				for (char *save = NULL, *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save), i++)
					if (i >= argc || strcmp(w, argv[i]) || strpbrk(w, "|&;<>()$`*?[") || w[0] == '#' || w[0] == '~')
						abort();
				if (i != argc)
					abort();
			}
			free(argv);
		} else {
			refused_with_one_line(&status);
			if (argv || argc)
				abort();   /* nothing half made */
		}
		break;
	}
	}
	return 0;
}
