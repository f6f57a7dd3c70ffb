/* One escaping function per language plumb writes text into.  Every string
 * that reaches a gnuplot script, an HTML page or a CSV file goes through the
 * function of that sink, so a name taken from a file, a folder or a report
 * someone handed over is shown as text and never runs as a command, a script
 * or a formula, nor as a terminal's escape sequence.  JSON needs none here: every JSON string plumb writes is made
 * by json-c, which escapes it. */
#ifndef PLUMB_ESCAPE_H
#define PLUMB_ESCAPE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>

/* A gnuplot string, quotes included: single-quoted, where gnuplot
 * substitutes nothing (no backquote command, no @macro, no backslash
 * escape), and where the text holds a quote, a parenthesised concatenation
 * ('it'."'".'s') that gnuplot accepts wherever it takes a string (titles,
 * labels, file names).  A line break would end the command, so CR and LF
 * become spaces; so do the other control characters. */
void escape_gnuplot(FILE *f, const char *text);
/* Whether escape_gnuplot writes text unchanged: false when it holds a
 * control character, which it turns into a space.  A file name that is not
 * is never handed to gnuplot: "a\nb/plot.png" would be written as
 * "a b/plot.png", in another folder. */
bool escape_gnuplot_exact(const char *text);

/* Text for an HTML page, in an element or in a quoted attribute:
 * & < > " ' become entities.  escape_html_span writes the first length
 * bytes of text (fewer if it ends first). */
void escape_html(FILE *f, const char *text);
void escape_html_span(FILE *f, const char *text, size_t length);

/* One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF,
 * a quote written twice.  A field a spreadsheet would read as a formula
 * (starting with = + - @, a tab or a CR, and not simply a number such as
 * -2.5) is written quoted with a leading apostrophe, so the spreadsheet
 * shows the text instead of computing it. */
void escape_csv(FILE *f, const char *text);

/* Text for a terminal: the first length bytes of text (fewer if it ends
 * first) with every control character (C0, DEL, and C1 as UTF-8 encodes it,
 * U+0080 to U+009F) written as '?', so a region, file or event name cannot
 * move the cursor, retitle the window or hide the lines above it with an
 * escape sequence.  escape_terminal_in_place does the same to a string. */
void escape_terminal_span(FILE *f, const char *text, size_t length);
void escape_terminal_in_place(char *text);

#endif
