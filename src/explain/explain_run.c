/* The whole job of plumb explain: the machine, the measured runs, the
 * Valgrind run (exact counts and the simulation), then the predictions.
 * Above every step; the steps write into the result (explain_result.c). */
#include <errno.h>
#include <stdio.h>
#include "explain/explain.h"
#include "machine/machine_model.h"

/* The fresh figures against a saved model: a note per figure that differs
 * beyond both spreads, or one that they agree. */
static void compare_with_saved(explain_result *out, const machine_model *fresh, const char *path)
{
	machine_model saved;
	plumb_status why;
	if (machine_model_load(path, &saved, &why) != 0) {
		explain_result_note(out, "machine: not compared with a saved model: %s", why.message);
		return;
	}
	char notes[17][400];
	size_t n = machine_model_difference_notes(fresh, &saved, path, notes, 17);
	for (size_t i = 0; i < (n ? n : 1) && i < 17; i++)
		explain_result_note(out, "machine: %s", notes[i]);
}

int explain_run(char *const argv[], const explain_options *options, explain_result *out, plumb_status *status)
{
	if (explain_result_init(out, argv, options, status) != 0) {
		explain_result_free(out);
		return -1;
	}
	plumb_status step;
	machine_model fresh;
	/* The machine first, while nothing else of ours runs. */
	if (options->machine_file) {
		if (explain_machine_load(options->machine_file, &out->machine, status) != 0) {
			explain_result_free(out);
			return -1;
		}
		out->have_machine = true;
		/* plumb lat's report has latencies and MLP but no bandwidth:
		 * the bandwidths are measured now (1-3 s) rather than every
		 * prediction left "not known" (man plumb-explain's example) */
		if (options->instrument && explain_machine_lacks_bandwidth(&out->machine) &&
		    explain_machine_measure_bandwidths(&options->machine, &out->machine, &step) != 0)
			explain_result_note(out, "machine: the read bandwidths %s lacks could not be measured: %s",
			                    options->machine_file, step.message);
	} else if (!options->instrument) {
		/* the prediction needs Valgrind's counts: nothing to price, so
		 * the sweep (10-20 s) is not run */
		snprintf(out->machine_error, sizeof out->machine_error,
		         "not measured: without Valgrind's counts (--no-valgrind) there is nothing to predict");
	} else if (explain_machine_measure_model(&options->machine, &out->machine, &fresh, &step) == 0) {
		out->have_machine = true;
		if (options->compare_file)
			compare_with_saved(out, &fresh, options->compare_file);
	} else {
		snprintf(out->machine_error, sizeof out->machine_error, "%s", step.message);
	}
	/* a page fault's kernel time: quick, and not in a saved report */
	if (out->have_machine)
		out->machine.fault_ns = explain_machine_fault_ns();
	/* the other machine's file before anything runs: a bad one is one error */
	if (options->other_file && explain_other_load(options->other_file, out, status) != 0) {
		explain_result_free(out);
		return -1;
	}
	/* a report.json holds no fault cost: the other machine's faults are
	 * priced at this one's, so that the two columns differ by the caches
	 * and figures the report gives, not by a term one of them lacks */
	if (options->other_file && out->have_machine)
		out->other_machine.fault_ns = out->machine.fault_ns;
	if (explain_measure(argv, options, out, status) != 0) {
		explain_result_free(out);
		return -1;
	}
	if (!options->instrument) {
		snprintf(out->instrument_error, sizeof out->instrument_error, "not asked for (--no-valgrind)");
		snprintf(out->simulate_error, sizeof out->simulate_error, "not asked for (--no-valgrind)");
	} else {
		if (!options->simulate)
			snprintf(out->simulate_error, sizeof out->simulate_error, "not asked for (--no-simulate)");
		/* One Valgrind run gives both the exact counts and the trace. */
		if (explain_instrument(argv, options, out, &step) != 0) {
			/* A program that exec'd another: what ran under Valgrind was
			 * only its part before the exec, and it would be presented as
			 * the whole program (plumb sim and trace record refuse too). */
			if (step.code == EXDEV) {
				*status = step;
				explain_result_free(out);
				return -1;
			}
			snprintf(out->instrument_error, sizeof out->instrument_error, "%s", step.message);
			if (!out->simulate_error[0])
				snprintf(out->simulate_error, sizeof out->simulate_error, "%s", step.message);
		}
	}
	explain_predict_all(out);
	return 0;
}
