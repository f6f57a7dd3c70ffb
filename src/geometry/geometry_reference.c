/* What the CPU says about its data TLBs, to set beside what timing finds.
 * AMD: CPUID 0x80000005 EBX (L1 DTLB, 4 KiB pages) and 0x80000006 EBX (L2
 * DTLB).  Intel: CPUID 0x18, the deterministic address translation leaf
 * (data and unified TLBs that hold 4 KiB pages).  Anything else: unknown. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include "geometry/geometry.h"

static int amd_ways(unsigned code)
{
	/* 0x80000006 encodes associativity; 0xF (or 0xFF in 0x80000005) is full. */
	static const int table[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, -1 };
	return table[code & 15];
}

void geometry_tlb_reference_decode_amd(uint32_t ebx_80000005, uint32_t ebx_80000006, bool hypervisor,
                                       geometry_tlb_reference *out)
{
	memset(out, 0, sizeof *out);
	unsigned l1_entries = (ebx_80000005 >> 16) & 0xff, l1_ways = ebx_80000005 >> 24;
	unsigned l2_entries = (ebx_80000006 >> 16) & 0xfff, l2_ways = ebx_80000006 >> 28;
	if (l1_entries) {
		out->entries[out->levels] = l1_entries;
		out->ways[out->levels++] = l1_ways == 0xff ? -1 : (int)l1_ways;
	}
	if (l2_entries) {
		out->entries[out->levels] = l2_entries;
		out->ways[out->levels++] = amd_ways(l2_ways);
	}
	snprintf(out->source, sizeof out->source, hypervisor ? "cpuid 0x80000005/6 (hypervisor)" : "cpuid 0x80000005/6");
}

static void read_amd(geometry_tlb_reference *out)
{
	unsigned a, b, c, d;
	if (__get_cpuid(0x80000000, &a, &b, &c, &d) == 0 || a < 0x80000006)
		return;
	__cpuid(1, a, b, c, d);
	bool hypervisor = (c >> 31) & 1;
	__cpuid(0x80000005, a, b, c, d);
	unsigned ebx5 = b;
	__cpuid(0x80000006, a, b, c, d);
	geometry_tlb_reference_decode_amd(ebx5, b, hypervisor, out);
}

static void read_intel(geometry_tlb_reference *out)
{
	unsigned a, b, c, d, max_leaf;
	if (__get_cpuid(0, &max_leaf, &b, &c, &d) == 0 || max_leaf < 0x18)
		return;
	__cpuid_count(0x18, 0, a, b, c, d);
	unsigned subleaves = a;
	for (unsigned s = 0; s <= subleaves && out->levels < 2; s++) {
		__cpuid_count(0x18, s, a, b, c, d);
		unsigned type = d & 31;        /* 1 data, 2 instruction, 3 unified, 4 load, 5 store */
		unsigned level = (d >> 5) & 7;
		bool small_pages = b & 1;
		if (type == 0 || type == 2 || !small_pages || level == 0)
			continue;
		unsigned ways = b >> 16, sets = c;
		bool full = (d >> 8) & 1;
		if (out->levels < (int)level) {
			out->entries[level - 1] = ways * sets;
			out->ways[level - 1] = full ? -1 : (int)ways;
			out->levels = (int)level;
		}
	}
	if (out->levels)
		snprintf(out->source, sizeof out->source, "cpuid 0x18");
}

void geometry_tlb_reference_read(geometry_tlb_reference *out)
{
	memset(out, 0, sizeof *out);
	snprintf(out->source, sizeof out->source, "unknown");
	unsigned a, b, c, d;
	if (__get_cpuid(0, &a, &b, &c, &d) == 0)
		return;
	char vendor[13];
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = 0;
	if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0)
		read_amd(out);
	else if (strcmp(vendor, "GenuineIntel") == 0)
		read_intel(out);
}
