/* Temporary paths under $TMPDIR (src/core/tempdir.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "core/interrupt.h"
#include "core/tempdir.h"

const char *temp_dir(void)
{
	const char *dir = secure_getenv("TMPDIR");
	return dir && dir[0] ? dir : "/tmp";
}

int temp_path(char *out, size_t size, const char *name, plumb_status *status)
{
	const char *dir = temp_dir();
	int n = snprintf(out, size, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= size)
		return plumb_fail(status, ENAMETOOLONG, "the temporary folder %s: its name is too long", dir);
	return 0;
}

int temp_folder(char *out, size_t size, const char *name, plumb_status *status)
{
	if (temp_path(out, size, name, status) != 0)
		return -1;
	if (!mkdtemp(out))
		return plumb_fail_errno(status, errno, "cannot create a temporary folder in %s", temp_dir());
	interrupt_add_path(out, true);
	return 0;
}
