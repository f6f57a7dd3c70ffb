/* The variable that holds a data address, named as perf c2c names one:
 * symbol+offset, from the executable's ELF symbol table (.symtab, else
 * .dynsym), placed where the program ran it by the address plumbgrind's code
 * map gives main (a position-independent executable is loaded anywhere).
 * Only the executable's own variables (globals and statics) have names here;
 * an address on the heap, a stack or in a library is "unknown", with why. */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "explain/explain.h"
#include "trace/trace.h"
#include "explain/explain_internal.h"

/* The executable execvp would run for name. */
static bool program_path(const char *name, char *out, size_t size)
{
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return true;
	}
	const char *path = secure_getenv("PATH");
	if (!path || !path[0])
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t length = colon ? (size_t)(colon - path) : strlen(path);
		if (snprintf(out, size, "%.*s/%s", (int)length, length ? path : ".", name) < (int)size &&
		    access(out, X_OK) == 0)
			return true;
		path += length + (colon ? 1 : 0);
	}
	return false;
}

static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *data = NULL;
	long length = -1;
	if (fseek(f, 0, SEEK_END) == 0 && (length = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (data = malloc((size_t)length)) && fread(data, 1, (size_t)length, f) != (size_t)length) {
		free(data);
		data = NULL;
	}
	fclose(f);
	*size = data ? (size_t)length : 0;
	return data;
}

/* The symbol table of kind type (SHT_SYMTAB or SHT_DYNSYM) and its strings. */
static bool symbol_table(const char *data, size_t size, const Elf64_Ehdr *header, Elf32_Word type,
                         const Elf64_Sym **symbols, size_t *count, const char **strings, size_t *strings_size)
{
	if (header->e_shoff == 0 || header->e_shentsize != sizeof(Elf64_Shdr) ||
	    header->e_shoff > size || (size - header->e_shoff) / sizeof(Elf64_Shdr) < header->e_shnum)
		return false;
	const Elf64_Shdr *sections = (const Elf64_Shdr *)(data + header->e_shoff);
	for (size_t i = 0; i < header->e_shnum; i++) {
		const Elf64_Shdr *s = &sections[i];
		if (s->sh_type != type || s->sh_link >= header->e_shnum || s->sh_entsize != sizeof(Elf64_Sym))
			continue;
		const Elf64_Shdr *text = &sections[s->sh_link];
		if (s->sh_offset > size || s->sh_size > size - s->sh_offset || text->sh_offset > size ||
		    text->sh_size > size - text->sh_offset)
			return false;
		*symbols = (const Elf64_Sym *)(data + s->sh_offset);
		*count = s->sh_size / sizeof(Elf64_Sym);
		*strings = data + text->sh_offset;
		*strings_size = text->sh_size;
		return true;
	}
	return false;
}

static const char *symbol_name(const Elf64_Sym *symbol, const char *strings, size_t strings_size)
{
	if (symbol->st_name >= strings_size || !memchr(strings + symbol->st_name, 0, strings_size - symbol->st_name))
		return NULL;
	return strings + symbol->st_name;
}

void explain_name_data(const char *program, const trace_code_map *map, explain_shared_line *lines, size_t count)
{
	char path[PATH_MAX];
	const char *why = NULL;
	size_t size = 0;
	char *data = NULL;
	const Elf64_Sym *symbols = NULL;
	const char *strings = NULL;
	size_t symbol_count = 0, strings_size = 0;
	uint64_t bias = 0, main_start = 0;
	if (!map)
		why = "no code map of the run to place the executable's symbols";
	else if (!program_path(program, path, sizeof path) || !(data = read_file(path, &size)))
		why = "the executable could not be read";
	const Elf64_Ehdr *header = (const Elf64_Ehdr *)data;
	if (!why && (size < sizeof *header || memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
	             header->e_ident[EI_CLASS] != ELFCLASS64))
		why = "the executable is not a 64-bit ELF file (a script?)";
	if (!why && !symbol_table(data, size, header, SHT_SYMTAB, &symbols, &symbol_count, &strings, &strings_size) &&
	    !symbol_table(data, size, header, SHT_DYNSYM, &symbols, &symbol_count, &strings, &strings_size))
		why = "the executable has no symbol table (stripped)";
	if (!why && !trace_code_map_function_start(map, "main", &main_start))
		why = "the code map does not name main, so the executable's place in memory is unknown";
	if (!why) {
		bool found = false;
		for (size_t i = 0; i < symbol_count && !found; i++) {
			const char *name = symbol_name(&symbols[i], strings, strings_size);
			if (name && ELF64_ST_TYPE(symbols[i].st_info) == STT_FUNC && !strcmp(name, "main") &&
			    symbols[i].st_value <= main_start) {
				bias = main_start - symbols[i].st_value;
				found = true;
			}
		}
		if (!found)
			why = "the symbol table has no main";
	}
	for (size_t k = 0; k < count; k++) {
		explain_shared_line *line = &lines[k];
		if (why) {
			snprintf(line->variable, sizeof line->variable, "unknown (%s)", why);
			continue;
		}
		/* every variable whose bytes overlap the line's, in address order
		 * (a line holds a few: 16 at most are named) */
		uint64_t line_start = line->address, line_end = line->address + line->bytes;
		const Elf64_Sym *found[16];
		size_t named = 0, used = 0;
		for (size_t i = 0; i < symbol_count && named < 16; i++) {
			const Elf64_Sym *s = &symbols[i];
			int type = ELF64_ST_TYPE(s->st_info);
			if ((type != STT_OBJECT && type != STT_COMMON) || s->st_shndx == SHN_UNDEF)
				continue;
			uint64_t start = s->st_value + bias, end = start + (s->st_size ? s->st_size : 1);
			const char *name = symbol_name(s, strings, strings_size);
			if (end <= line_start || start >= line_end || !name || !name[0])
				continue;
			size_t at = named++;
			while (at > 0 && found[at - 1]->st_value > s->st_value) {
				found[at] = found[at - 1];
				at--;
			}
			found[at] = s;
		}
		line->variable[0] = 0;
		for (size_t f = 0; f < named; f++) {
			const Elf64_Sym *s = found[f];
			uint64_t start = s->st_value + bias;
			const char *name = symbol_name(s, strings, strings_size);
			/* as perf c2c: symbol+offset of the line's first byte, or the
			 * symbol and where in the line it starts */
			int n = start >= line_start
			        ? snprintf(line->variable + used, sizeof line->variable - used, "%s%s (%llu bytes, at byte %llu "
			                   "of the line)", f ? ", " : "", name, (unsigned long long)s->st_size,
			                   (unsigned long long)(start - line_start))
			        : snprintf(line->variable + used, sizeof line->variable - used, "%s%s+%llu (%llu bytes)",
			                   f ? ", " : "", name, (unsigned long long)(line_start - start),
			                   (unsigned long long)s->st_size);
			if (n < 0 || (size_t)n >= sizeof line->variable - used)
				break;
			used += (size_t)n;
		}
		if (!named)
			snprintf(line->variable, sizeof line->variable,
			         "unknown (no variable of %s covers it: the heap, a stack or a library)", program);
	}
	free(data);
}
