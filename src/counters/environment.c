/* What this machine lets us count, so that every "unsupported" can say why
 * (no PMU, perf_event_paranoid, missing capability) instead of a bare errno. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <cpuid.h>
#include "counters/counters.h"

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = -100;
	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = -100;
		fclose(f);
	}
	return level;
}

static bool cpu_pmu_present(void)
{
	/* The core PMU is "cpu" (Intel, AMD) or "cpu_core"/"cpu_atom" (hybrid). */
	DIR *dir = opendir("/sys/bus/event_source/devices");
	bool found = false;
	if (!dir)
		return false;
	for (struct dirent *entry; (entry = readdir(dir)) != NULL;)
		if (!strcmp(entry->d_name, "cpu") || !strncmp(entry->d_name, "cpu_", 4))
			found = true;
	closedir(dir);
	return found;
}

static bool has_perfmon_capability(void)
{
	/* CapEff bit 38 is CAP_PERFMON, bit 21 CAP_SYS_ADMIN. */
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long caps = 0;
	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return (caps >> 38 & 1) || (caps >> 21 & 1);
}

void counter_cpu_identity(char *out, size_t length)
{
	unsigned a, b, c, d;
	char vendor[13] = { 0 };
	if (!__get_cpuid(0, &a, &b, &c, &d)) {
		snprintf(out, length, "unknown");
		return;
	}
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	__get_cpuid(1, &a, &b, &c, &d);
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family >= 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	snprintf(out, length, "%s:%u:%u", vendor, family, model);
}

void counter_environment_read(counter_environment *out)
{
	memset(out, 0, sizeof *out);
	out->perf_event_paranoid = read_paranoid();
	out->cpu_pmu_present = cpu_pmu_present();
	out->privileged = has_perfmon_capability();
	counter_cpu_identity(out->cpu_identity, sizeof out->cpu_identity);
}

void counter_explain_errno(int err, const counter_environment *env, char *reason, size_t length)
{
	switch (err) {
	case ENOENT:
		if (!env->cpu_pmu_present)
			snprintf(reason, length, "no PMU: perf_event_open gives ENOENT and "
			         "/sys/bus/event_source/devices has no cpu PMU (a VM without vPMU?)");
		else
			snprintf(reason, length, "perf_event_open: ENOENT: the PMU does not know this event");
		break;
	case EACCES:
	case EPERM:
		snprintf(reason, length, "perf_event_open: %s: perf_event_paranoid is %d%s; count user "
		         "space only, or lower the level / grant CAP_PERFMON",
		         err == EACCES ? "EACCES" : "EPERM", env->perf_event_paranoid,
		         env->privileged ? " (and even with privileges the kernel refused)" : " without CAP_PERFMON");
		break;
	case EOPNOTSUPP:
		snprintf(reason, length, "perf_event_open: EOPNOTSUPP: the PMU cannot do this "
		         "(sampling interrupts, or a filter it lacks)");
		break;
	case ENODEV:
		snprintf(reason, length, "perf_event_open: ENODEV: event not supported on this CPU");
		break;
	case EINVAL:
		snprintf(reason, length, "perf_event_open: EINVAL: the kernel rejects this configuration%s",
		         env->cpu_pmu_present ? "" : " (no cpu PMU here)");
		break;
	case EMFILE:
		snprintf(reason, length, "perf_event_open: EMFILE: too many open files");
		break;
	case EBUSY:
		snprintf(reason, length, "perf_event_open: EBUSY: the counter is held exclusively by someone else");
		break;
	default:
		snprintf(reason, length, "perf_event_open: %s", strerror(err));
		break;
	}
}
