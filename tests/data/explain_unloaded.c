/* A region whose code is in a library the program loads, runs and unloads
 * before it ends (a plugin): plumb explain must still read that code's
 * bytes to price its blocks, though nothing maps the library any more when
 * the program has ended.  argv[1]: the library (explain_unloaded_lib.c);
 * argv[2]: the library loop's length; argv[3]: the length of the
 * program's own loop after the library has gone (long enough, the trace of
 * the library's code is read only after the unload). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <plumb/region.h>

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!library) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	long (*mix)(long) = (long (*)(long))dlsym(library, "plugin_mix");
	if (!mix)
		return 1;
	plumb_region_begin("plugin");
	long sum = mix(atol(argv[2]));
	plumb_region_end("plugin");
	dlclose(library);
	/* after the library has gone: code of the program's own */
	plumb_region_begin("after");
	long more = 0, after = atol(argv[3]);
	for (long i = 0; i < after; i++)
		more += (i ^ sum) % 7;
	plumb_region_end("after");
	printf("%ld %ld\n", sum, more);
	return 0;
}
