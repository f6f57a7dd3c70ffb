#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plumb/counters.h"
#include "counters/perf_events.h"

Test(counters_catalogue, every_seed_event_is_catalogued)
{
	const char *seeds[] = { "PAPI_TLB_DM", "PAPI_TLB_TL", "PAPI_L1_DCM", "PAPI_L2_DCM", "PAPI_CA_ITV",
	                        "PAPI_CA_INV", "PAPI_CA_SHR", "PAPI_CA_CLN", "PAPI_BR_MSP", "PAPI_TOT_CYC",
	                        "PAPI_TOT_INS", "PAPI_TOT_IIS", "PAPI_LD_INS", "PAPI_SR_INS", "PAPI_FP_OPS",
	                        "PAPI_FP_INS", "PAPI_FSQ_INS", "PAPI_L1_ICM", "PAPI_L2_ICM" };
	for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
		const counter_catalogue_entry *e = counter_catalogue_find(seeds[i]);
		cr_assert_not_null(e, "%s missing", seeds[i]);
		cr_assert_not_null(e->relation, "%s has no relation", seeds[i]);
	}
	cr_assert_null(counter_catalogue_find("PAPI_NOPE"));
}

Test(counters_catalogue, perf_generics_resolve)
{
	size_t n;
	const counter_catalogue_entry *c = counter_catalogue(&n);
	for (size_t i = 0; i < n; i++) {
		if (!c[i].perf_generic)
			continue;
		perf_event_spec spec;
		char reason[COUNTER_REASON_MAX];
		cr_assert_eq(perf_event_resolve(c[i].perf_generic, &spec, reason, sizeof reason), 0,
		             "%s -> %s: %s", c[i].preset, c[i].perf_generic, reason);
	}
}

#ifdef PLUMB_HAVE_PFM
/* libpfm4 knows the Zen 4 PMU on this machine (it identifies the CPU from
 * CPUID, even in a VM without a vPMU), so every Zen 4 candidate must at least
 * encode: a typo in an event or unit mask name fails here. */
Test(counters_catalogue, zen4_candidates_encode)
{
	counter_environment env;
	counter_environment_read(&env);
	if (counter_vendor_of(env.cpu_identity) != COUNTER_VENDOR_AMD_ZEN4)
		cr_skip_test("not a Zen 4 CPU (%s)", env.cpu_identity);
	size_t n;
	const counter_catalogue_entry *c = counter_catalogue(&n);
	for (size_t i = 0; i < n; i++) {
		const char *native = c[i].native[COUNTER_VENDOR_AMD_ZEN4];
		if (!native)
			continue;
		perf_event_spec spec;
		char reason[COUNTER_REASON_MAX];
		cr_assert_eq(perf_event_resolve(native, &spec, reason, sizeof reason), 0, "%s: %s", native, reason);
		cr_assert_eq(spec.attr.type, PERF_TYPE_RAW);
	}
}
#endif

Test(counters_catalogue, vendor_identification)
{
	cr_assert_eq(counter_vendor_of("AuthenticAMD:25:17"), COUNTER_VENDOR_AMD_ZEN4);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:106"), COUNTER_VENDOR_INTEL_ICELAKE);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:85"), COUNTER_VENDOR_COUNT);
	cr_assert_eq(counter_vendor_of("garbage"), COUNTER_VENDOR_COUNT);
	cr_assert_str_eq(counter_vendor_name(COUNTER_VENDOR_AMD_ZEN4), "amd64_fam19h_zen4");
}

Test(counters_verification, missing_file_means_unverified)
{
	counter_verification *records;
	size_t n;
	plumb_status status;
	cr_assert_eq(counter_verification_load("/nonexistent/plumb-verification.tsv", &records, &n, &status), 0);
	cr_assert_eq(n, 0);
	cr_assert_eq(counter_verification_lookup(records, n, "PAPI_L1_DCM", "x", "y"), COUNTER_UNVERIFIED);
}

Test(counters_verification, append_then_load_last_wins)
{
	char path[] = "/tmp/plumb-verify-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
	counter_verification r = { .event = "PAPI_TLB_DM", .cpu_identity = "AuthenticAMD:25:17",
	                           .native = "amd64_fam19h_zen4::L1_DTLB_MISS", .verdict = COUNTER_REJECTED,
	                           .evidence = "first run" };
	plumb_status status;
	cr_assert_eq(counter_verification_append(path, &r, &status), 0, "%s", status.message);
	r.verdict = COUNTER_VERIFIED;
	snprintf(r.evidence, sizeof r.evidence, "plumb validate dtlb, 2026-11-22, 0.1%%");
	cr_assert_eq(counter_verification_append(path, &r, &status), 0);
	counter_verification *records;
	size_t n;
	cr_assert_eq(counter_verification_load(path, &records, &n, &status), 0, "%s", status.message);
	cr_assert_eq(n, 2);
	cr_assert_eq(counter_verification_lookup(records, n, "PAPI_TLB_DM", "AuthenticAMD:25:17",
	                                         "amd64_fam19h_zen4::L1_DTLB_MISS"), COUNTER_VERIFIED);
	cr_assert_eq(counter_verification_lookup(records, n, "PAPI_TLB_DM", "GenuineIntel:6:106",
	                                         "amd64_fam19h_zen4::L1_DTLB_MISS"), COUNTER_UNVERIFIED);
	free(records);
	r.verdict = COUNTER_UNVERIFIED;
	cr_assert_neq(counter_verification_append(path, &r, &status), 0);
	snprintf(r.native, sizeof r.native, "has\ttab");
	r.verdict = COUNTER_VERIFIED;
	cr_assert_neq(counter_verification_append(path, &r, &status), 0);
	unlink(path);
}

Test(counters_verification, malformed_line_is_rejected_with_its_number)
{
	char path[] = "/tmp/plumb-verify-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	const char text[] = "# comment\nPAPI_L1_DCM\tcpu\tnative\tmaybe\tevidence\n";
	cr_assert_eq(write(fd, text, sizeof text - 1), (ssize_t)(sizeof text - 1));
	close(fd);
	counter_verification *records;
	size_t n;
	plumb_status status;
	cr_assert_neq(counter_verification_load(path, &records, &n, &status), 0);
	cr_assert(strstr(status.message, ":2:"), "%s", status.message);
	unlink(path);
}
