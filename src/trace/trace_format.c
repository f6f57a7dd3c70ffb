/* The trace formats' names, and the format a file name's suffix implies:
 * below the readers and the writers, which both use them. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include "core/status.h"
#include "trace/trace.h"

const char *trace_format_name(trace_format format)
{
	switch (format) {
	case TRACE_FORMAT_AUTO: return "auto";
	case TRACE_FORMAT_NATIVE: return "native";
	case TRACE_FORMAT_LACKEY: return "lackey";
	case TRACE_FORMAT_DIN: return "din";
	}
	return "unknown";
}

int trace_format_parse(const char *name, trace_format *out, plumb_status *status)
{
	static const trace_format all[] = { TRACE_FORMAT_AUTO, TRACE_FORMAT_NATIVE, TRACE_FORMAT_LACKEY, TRACE_FORMAT_DIN };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (name && strcmp(name, trace_format_name(all[i])) == 0) {
			*out = all[i];
			return 0;
		}
	return plumb_fail(status, EINVAL, "unknown trace format '%s' (want auto, native, lackey or din)", name ? name : "");
}

static bool has_suffix(const char *path, const char *suffix)
{
	size_t n = strlen(path), m = strlen(suffix);
	return n > m && strcmp(path + n - m, suffix) == 0;
}

int trace_format_from_path(const char *path, trace_format *out, plumb_status *status)
{
	if (has_suffix(path, ".ptrace"))
		*out = TRACE_FORMAT_NATIVE;
	else if (has_suffix(path, ".din"))
		*out = TRACE_FORMAT_DIN;
	else if (has_suffix(path, ".lackey"))
		*out = TRACE_FORMAT_LACKEY;
	else
		return plumb_fail(status, EINVAL, "cannot tell a trace format from the name '%s' "
		                  "(name it .ptrace, .din or .lackey, or give the format)", path);
	return 0;
}
