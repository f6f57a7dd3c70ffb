/* Fuzzes what users type or write for the counters: event lists (plumb stat
 * -e, PLUMB_EVENTS), event names (perf spellings, raw r<hex>, presets,
 * natives) and verification records.  Any input must give names/records or
 * a one-line reason, never a crash, a leak or a malformed result. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "counters/counters.h"
#include "counters/perf_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[4096];
	plumb_status status;
	status.message[0] = '\0';
	if (size < sizeof text) {
		memcpy(text, data, size);
		text[size] = '\0';
		char storage[4096];
		const char *names[COUNTER_MAX_EVENTS];
		size_t n;
		if (counter_event_list_parse(text, storage, sizeof storage, names, &n, &status) == 0) {
			if (n == 0 || n > COUNTER_MAX_EVENTS)
				abort();
			for (size_t i = 0; i < n; i++) {
				if (!names[i][0] || strchr(names[i], ','))
					abort();
				perf_event_spec spec;
				char reason[COUNTER_REASON_MAX] = "";
				if (perf_event_resolve(names[i], &spec, reason, sizeof reason) != 0 && !reason[0])
					abort();   /* a refusal must say why */
				char papi[128];
				const char *translated = perf_event_papi_name(names[i], papi, sizeof papi);
				if (translated && strncmp(translated, "perf::", 6))
					abort();
			}
		} else if (!status.message[0]) {
			abort();
		}
	}
	counter_verification *records;
	size_t count;
	status.message[0] = '\0';
	if (counter_verification_parse((const char *)data, size, "fuzz", &records, &count, &status) == 0) {
		for (size_t i = 0; i < count; i++)
			if (!records[i].event[0] || !records[i].cpu_identity[0] || !records[i].native[0] ||
			    strchr(records[i].native, '\t') || records[i].verdict == COUNTER_UNVERIFIED)
				abort();
		if (count)
			(void)counter_verification_lookup(records, count, records[0].event, records[0].cpu_identity,
			                                  records[0].native);
		/* What plumb events prints for each record: bounded, never empty. */
		for (size_t i = 0; i < count; i++) {
			char text[160];
			counter_verification_describe(&records[i], text, sizeof text);
			if (!text[0] || strlen(text) >= sizeof text)
				abort();
		}
		free(records);
	} else if (!status.message[0]) {
		abort();
	}
	return 0;
}
