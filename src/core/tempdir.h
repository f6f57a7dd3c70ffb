/* Where plumb puts temporary files and folders: $TMPDIR when it is set and
 * not empty, else /tmp (the convention mktemp(1) and POSIX's tmpfile
 * follow).  Every temporary path of plumb's is made here, so a user who
 * points TMPDIR elsewhere (a full /tmp, a tmpfs) is honoured everywhere. */
#ifndef PLUMB_TEMPDIR_H
#define PLUMB_TEMPDIR_H

#include <stddef.h>
#include "core/status.h"

/* $TMPDIR, or "/tmp". */
const char *temp_dir(void);
/* out = temp_dir() + "/" + name (a mkstemp or mkdtemp template, ending in
 * XXXXXX); fails when it does not fit. */
int temp_path(char *out, size_t size, const char *name, plumb_status *status);
/* A fresh private folder temp_dir()/NAME (NAME ends in XXXXXX), made with
 * mkdtemp and registered for removal on a signal (interrupt_add_path): the
 * caller removes it and calls interrupt_remove_path. */
int temp_folder(char *out, size_t size, const char *name, plumb_status *status);

#endif
