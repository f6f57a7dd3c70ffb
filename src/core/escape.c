/* One escaping function per sink (plumb/escape.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/escape.h"

/* gnuplot 5.4 reads '' in a single-quoted string as one quote, but not two
 * such pairs in a row ('a''''b' is a syntax error), so a text with a quote
 * is written as a parenthesised concatenation instead: ('it'."'".'s'), in
 * which the double-quoted piece holds a lone quote and nothing gnuplot could
 * substitute. */
void escape_gnuplot(FILE *f, const char *text)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	bool pieces = strchr((const char *)s, '\'') != NULL;
	fputs(pieces ? "('" : "'", f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'.\"'\".'", f);
		else if (*s < 0x20 || *s == 0x7f)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputs(pieces ? "')" : "'", f);
}

bool escape_gnuplot_exact(const char *text)
{
	for (const unsigned char *s = (const unsigned char *)(text ? text : ""); *s; s++)
		if (*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

void escape_html_span(FILE *f, const char *text, size_t length)
{
	for (size_t i = 0; text && i < length && text[i]; i++) {
		switch (text[i]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(text[i], f);
		}
	}
}

void escape_html(FILE *f, const char *text)
{
	escape_html_span(f, text, text ? strlen(text) : 0);
}

/* "-2.5", "+3", "-1e-9", "-inf" are numbers, not formulas: strtod reads all
 * of them, and a spreadsheet reads them as numbers too.  Hexadecimal
 * ("-0x1p3") is not a number to a spreadsheet. */
static bool is_number(const char *text)
{
	char *end;
	strtod(text, &end);
	return end != text && *end == '\0' && !strpbrk(text, "xX\t\r");
}

static bool is_formula(const char *text)
{
	return text[0] && strchr("=+-@\t\r", text[0]) && text[1] && !is_number(text);
}

void escape_csv(FILE *f, const char *text)
{
	if (!text)
		text = "";
	bool formula = is_formula(text);
	if (!formula && !strpbrk(text, ",\"\n\r")) {
		fputs(text, f);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *text; text++) {
		if (*text == '"')
			fputc('"', f);
		fputc(*text, f);
	}
	fputc('"', f);
}

/* length of the control character at s (of at most n bytes), 0 if none */
static size_t control_length(const unsigned char *s, size_t n)
{
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 1;
	if (s[0] == 0xc2 && n >= 2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	return 0;
}

void escape_terminal_span(FILE *f, const char *text, size_t length)
{
	const unsigned char *s = (const unsigned char *)(text ? text : "");
	size_t i = 0;
	while (i < length && s[i]) {
		size_t n = control_length(s + i, length - i);
		if (n) {
			fputc('?', f);
			i += n;
		} else {
			fputc(s[i], f);
			i++;
		}
	}
}

void escape_terminal_in_place(char *text)
{
	if (!text)
		return;
	unsigned char *s = (unsigned char *)text, *out = s;
	size_t left = strlen(text);
	while (*s) {
		size_t n = control_length(s, left);
		if (n) {
			*out++ = '?';
			s += n;
			left -= n;
		} else {
			*out++ = *s++;
			left--;
		}
	}
	*out = 0;
}
