#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "counters/counters.h"
#include "counters/perf_events.h"
#include "../temp_folder.h"

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
/* Every candidate of a table must encode through libpfm4's own table for
 * its PMU: a typo in an event or unit-mask name, or a name from another
 * generation's list, fails here on any machine.  LIBPFM_FORCE_PMU makes
 * libpfm4 use that PMU whatever CPU runs the test (each test is a process
 * of its own, and libpfm4 reads the variable when plumb first initialises it). */
static void candidates_encode_as(counter_vendor table, const char *pmu)
{
	setenv("LIBPFM_FORCE_PMU", pmu, 1);
	size_t n;
	const counter_catalogue_entry *c = counter_catalogue(&n);
	size_t checked = 0;
	for (size_t i = 0; i < n; i++) {
		if (!c[i].native[table]) {
			cr_assert_not_null(c[i].native_reason, "%s: no %s candidate and no reason", c[i].preset, pmu);
			continue;
		}
		char native[256];
		snprintf(native, sizeof native, "%s::%s", pmu, c[i].native[table]);
		perf_event_spec spec;
		char reason[COUNTER_REASON_MAX];
		cr_assert_eq(perf_event_resolve(native, &spec, reason, sizeof reason), 0, "%s: %s", native, reason);
		cr_assert_eq(spec.attr.type, PERF_TYPE_RAW);
		checked++;
	}
	cr_assert_gt(checked, 15, "only %zu %s candidates", checked, pmu);
}

Test(counters_catalogue, zen4_candidates_are_in_libpfm4s_zen4_table)
{
	candidates_encode_as(COUNTER_VENDOR_AMD_ZEN4, "amd64_fam19h_zen4");
}

Test(counters_catalogue, icelake_candidates_are_in_libpfm4s_icl_table)
{
	candidates_encode_as(COUNTER_VENDOR_INTEL_ICELAKE, "icl");
}

Test(counters_catalogue, icelake_server_candidates_are_in_libpfm4s_icx_table)
{
	candidates_encode_as(COUNTER_VENDOR_INTEL_ICELAKE, "icx");
}

Test(counters_catalogue, sapphire_rapids_candidates_are_in_libpfm4s_spr_table)
{
	candidates_encode_as(COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS, "spr");
}
#endif

Test(counters_catalogue, vendor_identification)
{
	cr_assert_eq(counter_vendor_of("AuthenticAMD:25:17"), COUNTER_VENDOR_AMD_ZEN4);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:106"), COUNTER_VENDOR_INTEL_ICELAKE);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:143"), COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:207"), COUNTER_VENDOR_INTEL_SAPPHIRERAPIDS);
	cr_assert_eq(counter_vendor_of("GenuineIntel:6:85"), COUNTER_VENDOR_COUNT);
	cr_assert_eq(counter_vendor_of("AuthenticAMD:26:2"), COUNTER_VENDOR_COUNT);   /* Zen 5: libpfm4 4.13 has no table */
	cr_assert_eq(counter_vendor_of("garbage"), COUNTER_VENDOR_COUNT);
	cr_assert_str_eq(counter_vendor_name(COUNTER_VENDOR_AMD_ZEN4), "amd64_fam19h_zen4");
}

/* The suggestion for a CPU comes from its own table with its own PMU's
 * prefix, never the first table's: on the Intel VM (family 6, model 207)
 * plumb used to suggest amd64_fam19h_zen4 events. */
Test(counters_catalogue, suggestions_follow_the_cpu_asked_about)
{
	const counter_catalogue_entry *l1 = counter_catalogue_find("PAPI_L1_DCM");
	char native[256], reason[COUNTER_REASON_MAX];
	cr_assert_str_eq(counter_catalogue_native(l1, "GenuineIntel:6:207", native, sizeof native, reason, sizeof reason),
	                 "spr::L1D:REPLACEMENT");
	cr_assert_str_eq(counter_catalogue_native(l1, "GenuineIntel:6:106", native, sizeof native, reason, sizeof reason),
	                 "icx::L1D:REPLACEMENT");
	cr_assert_str_eq(counter_catalogue_native(l1, "GenuineIntel:6:126", native, sizeof native, reason, sizeof reason),
	                 "icl::L1D:REPLACEMENT");
	cr_assert(!strncmp(counter_catalogue_native(l1, "AuthenticAMD:25:17", native, sizeof native, reason,
	                                            sizeof reason), "amd64_fam19h_zen4::", 19));
	/* A CPU without a table: no name at all, and the reason names the CPU. */
	cr_assert_null(counter_catalogue_native(l1, "AuthenticAMD:26:2", native, sizeof native, reason, sizeof reason));
	cr_assert(strstr(reason, "no native-event catalogue for this CPU") && strstr(reason, "family 26, model 2"),
	          "%s", reason);
	/* A table without a match: its reason, not another vendor's event. */
	const counter_catalogue_entry *divide = counter_catalogue_find("PAPI_FDV_INS");
	cr_assert_null(counter_catalogue_native(divide, "GenuineIntel:6:207", native, sizeof native, reason,
	                                        sizeof reason));
	cr_assert(strstr(reason, "DIVIDER_ACTIVE") && !strstr(reason, "amd64"), "%s", reason);
	counter_cpu_table table;
	counter_cpu_native_table("GenuineIntel:6:207", &table);
	cr_assert(table.known && table.caveat && strstr(table.caveat, "LIBPFM_FORCE_PMU=spr"));
}

/* Every event a validation benchmark predicts has a mapping here or an
 * explicit reason, on every table (fp-single and fp-div had none). */
Test(counters_catalogue, every_validated_event_is_mapped_or_explained)
{
	const char *validated[] = { "PAPI_SP_OPS", "PAPI_FML_INS", "PAPI_FDV_INS", "PAPI_FSQ_INS", "PAPI_FP_OPS",
	                            "PAPI_TLB_DM", "PAPI_CA_INV", "PAPI_LD_INS", "PAPI_SR_INS", "PAPI_TOT_IIS" };
	for (size_t i = 0; i < sizeof validated / sizeof validated[0]; i++) {
		const counter_catalogue_entry *e = counter_catalogue_find(validated[i]);
		cr_assert_not_null(e, "%s is not catalogued", validated[i]);
		cr_assert(e->perf_generic || e->relation, "%s", validated[i]);
		for (int v = 0; v < COUNTER_VENDOR_COUNT; v++)
			cr_assert(e->native[v] || e->native_reason, "%s: table %d has neither a candidate nor a reason",
			          validated[i], v);
	}
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
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-verify-XXXXXX");
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
	char path[TEMP_PATH_SIZE];
	temp_template(path, sizeof path, "plumb-verify-XXXXXX");
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
