/* plumb cluster across MPI ranks.  Every rank runs the report's sections
 * (each as its own process, exactly as plumb report runs them) pinned to
 * its node's CPUs, builds its row, and sends it to rank 0 as JSON text;
 * rank 0 builds the cluster table and writes DIR/cluster.json and
 * DIR/cluster.html.
 *
 * Waiting is never a busy loop: MPI implementations spin in blocking calls,
 * and a rank spinning on a CPU of a node another rank is measuring would
 * be measured too.  Every wait here polls (MPI_Iprobe, MPI_Test) and sleeps
 * between polls.
 *
 * A rank that dies: each rank sends rank 0 a small heartbeat every few
 * seconds from a thread while it measures; rank 0 gives a rank up when its
 * process is gone (same host) or after --rank-timeout seconds without a
 * heartbeat, and writes its row with the reason.  For the job to survive a
 * dead rank at all, mpirun needs --enable-recovery (Open MPI); srun keeps
 * the other tasks unless --kill-on-bad-exit is set. */
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cluster/cluster_mpi.h"
#include "cluster/cluster.h"
#include "core/cpu.h"
#include "report/report.h"

enum { TAG_RESULT = 101, TAG_HEARTBEAT = 102, TAG_TURN = 103, TAG_FINISH = 104 };
#define HOST_MAX 256
#define POLL_NS 20000000L          /* 20 ms between polls */
#define HEARTBEAT_SECONDS 5

typedef struct hello {
	char host[HOST_MAX];
	int64_t pid;
} hello;

static void nap(void)
{
	struct timespec t = { 0, POLL_NS };
	nanosleep(&t, NULL);
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Completes a request without spinning. */
static int wait_lazily(MPI_Request *request)
{
	int done = 0;
	while (!done) {
		if (MPI_Test(request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (!done)
			nap();
	}
	return 0;
}

/* A process on this host that has ended: gone, or a zombie its launcher
 * has not reaped yet. */
static bool process_gone(const char *host, const char *own_host, int64_t pid)
{
	if (strcmp(host, own_host) || pid <= 0)
		return false;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return true;
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ended = false;
	if (fgets(line, sizeof line, f)) {
		const char *close = strrchr(line, ')');
		ended = close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
	}
	fclose(f);
	return ended;
}

/* The CPUs of this node that this rank may use: mpirun binds a rank to one
 * core by default, so the mask is widened to every CPU the node (its
 * cgroup, its batch allocation) allows, which the kernel intersects for us. */
static int node_cpus(int *cpus, int max)
{
	cpu_set_t all;
	CPU_ZERO(&all);
	long configured = sysconf(_SC_NPROCESSORS_CONF);
	for (long c = 0; c < configured && c < CPU_SETSIZE; c++)
		CPU_SET((int)c, &all);
	if (sched_setaffinity(0, sizeof all, &all) != 0) {
		/* A CPU set that may not be widened: keep the one given. */
	}
	plumb_status status;
	return cpu_allowed(cpus, max, &status);
}

static int pin_to(const int *cpus, int n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int i = 0; i < n; i++)
		CPU_SET(cpus[i], &set);
	return sched_setaffinity(0, sizeof set, &set);
}

static void cpu_list_text(const int *cpus, int n, char *out, size_t length)
{
	size_t used = 0;
	out[0] = 0;
	for (int i = 0; i < n && used < length;) {
		int j = i;
		while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
			j++;
		if (j > i)
			used += (size_t)snprintf(out + used, length - used, "%s%d-%d", used ? "," : "", cpus[i], cpus[j]);
		else
			used += (size_t)snprintf(out + used, length - used, "%s%d", used ? "," : "", cpus[i]);
		i = j + 1;
	}
}

/* The heartbeat thread: one small message to rank 0 every few seconds
 * until told to stop (needs MPI_THREAD_MULTIPLE: the main thread polls for
 * its turn meanwhile; without it there are no heartbeats and rank 0 relies
 * on the process check and --rank-timeout from its own end). */
typedef struct heartbeat {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, running;
} heartbeat;

static void *heartbeat_run(void *argument)
{
	heartbeat *h = argument;
	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += HEARTBEAT_SECONDS;
		pthread_cond_timedwait(&h->wake, &h->lock, &until);
		if (h->stop)
			break;
		int beat = 1;
		MPI_Send(&beat, 1, MPI_INT, 0, TAG_HEARTBEAT, MPI_COMM_WORLD);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void heartbeat_start(heartbeat *h)
{
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	h->stop = false;
	h->running = pthread_create(&h->thread, NULL, heartbeat_run, h) == 0;
}

static void heartbeat_stop(heartbeat *h)
{
	if (h->running) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
		h->running = false;
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
}

/* Rank 0's view of every rank while it gathers. */
typedef struct gathered {
	char *json;
	char failure[PLUMB_MESSAGE_MAX + 64];
	double last_seen;
	bool done;
} gathered;

static void drain_heartbeats(gathered *g, int size)
{
	for (;;) {
		int flag = 0;
		MPI_Status st;
		if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_HEARTBEAT, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
			return;
		int beat;
		MPI_Recv(&beat, 1, MPI_INT, st.MPI_SOURCE, TAG_HEARTBEAT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size)
			g[st.MPI_SOURCE].last_seen = now_seconds();
	}
}

static void gather_results(gathered *g, int size, const hello *hellos, const char *own_host, double timeout)
{
	double start = now_seconds();
	for (int r = 1; r < size; r++)
		g[r].last_seen = start;
	for (;;) {
		drain_heartbeats(g, size);
		int pending = 0;
		for (int r = 1; r < size; r++) {
			if (g[r].done)
				continue;
			int flag = 0;
			MPI_Status st;
			if (MPI_Iprobe(r, TAG_RESULT, MPI_COMM_WORLD, &flag, &st) == MPI_SUCCESS && flag) {
				int length = 0;
				MPI_Get_count(&st, MPI_CHAR, &length);
				g[r].json = malloc((size_t)length + 1);
				if (g[r].json && MPI_Recv(g[r].json, length, MPI_CHAR, r, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS) {
					g[r].json[length] = 0;
				} else {
					free(g[r].json);
					g[r].json = NULL;
					snprintf(g[r].failure, sizeof g[r].failure, "rank %d's results could not be received", r);
				}
				g[r].done = true;
				continue;
			}
			if (process_gone(hellos[r].host, own_host, hellos[r].pid)) {
				snprintf(g[r].failure, sizeof g[r].failure, "rank %d died: its process %lld on %s ended without sending results", r,
				         (long long)hellos[r].pid, hellos[r].host);
				g[r].done = true;
				continue;
			}
			if (timeout > 0 && now_seconds() - g[r].last_seen > timeout) {
				snprintf(g[r].failure, sizeof g[r].failure, "rank %d on %s gave no sign of life for %.0f s (died, or its node hangs)", r,
				         hellos[r].host, timeout);
				g[r].done = true;
				continue;
			}
			pending++;
		}
		if (!pending)
			break;
		nap();
	}
	drain_heartbeats(g, size);
}

/* Waits for this node's previous rank to finish its turn, or to die. */
static void wait_turn(MPI_Comm node, int node_rank, const int64_t *node_pids, const char *host)
{
	if (node_rank == 0)
		return;
	for (;;) {
		int flag = 0;
		if (MPI_Iprobe(node_rank - 1, TAG_TURN, node, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && flag) {
			int token;
			MPI_Recv(&token, 1, MPI_INT, node_rank - 1, TAG_TURN, node, MPI_STATUS_IGNORE);
			return;
		}
		if (process_gone(host, host, node_pids[node_rank - 1]))
			return;
		nap();
	}
}

/* Every rank must fail the same way: rank 0 decides and says why once. */
static int agree(int ok, const char *message, int rank)
{
	int all = ok;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all && rank == 0 && message)
		fprintf(stderr, "plumb cluster: %s\n", message);
	return all;
}

int cluster_launcher_rank(void)
{
	static const char *const names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		const char *v = secure_getenv(names[i]);
		if (v && *v)
			return atoi(v);
	}
	return 0;
}

int cluster_mpi_exit_together(int code)
{
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return code;
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return code;
}

bool cluster_launched(void)
{
	static const char *const names[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (secure_getenv(names[i]))
			return true;
	return false;
}

int cluster_mpi_main(const char *program, const cluster_options *o)
{
	int provided = MPI_THREAD_SINGLE;
	plumb_status limit_status;
	if (cluster_file_limit_check(&limit_status) != 0) {
		fprintf(stderr, "plumb cluster: %s\n", limit_status.message);
		return 1;
	}
	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "plumb cluster: MPI_Init failed (run under mpirun or srun)\n");
		return 1;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rank = 0, size = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char list[512];
	if (o->sections && strlen(o->sections) >= sizeof list) {
		/* refused whole, never cut (and what is left run) */
		if (rank == 0)
			fprintf(stderr, "plumb cluster: --sections: the list is longer than %zu characters\n", sizeof list - 1);
		MPI_Finalize();
		return 2;
	}
	if (o->sections)
		snprintf(list, sizeof list, "%s", o->sections);
	else
		report_section_list(o->quick ? REPORT_SECTION_CLUSTER_QUICK : REPORT_SECTION_CLUSTER_DEFAULT, ",", list, sizeof list);
	const char *names[CLUSTER_MAX_SECTIONS];
	size_t count = 0;
	plumb_status status = { 0 };
	if (cluster_sections_parse(list, names, CLUSTER_MAX_SECTIONS, &count, &status) != 0) {
		if (rank == 0)
			fprintf(stderr, "plumb cluster: %s\n", status.message);
		MPI_Finalize();
		return 2;
	}
	/* The output folder: rank 0 writes it, so rank 0 checks it, before minutes of measuring. */
	char message[PLUMB_MESSAGE_MAX + 64] = "";
	int ok = 1;
	struct stat folder;
	if (rank == 0 && mkdir(o->output_dir, 0777) != 0 && errno != EEXIST) {
		snprintf(message, sizeof message, "cannot create '%s': %s", o->output_dir, strerror(errno));
		ok = 0;
	} else if (rank == 0 && access(o->output_dir, W_OK) != 0) {
		snprintf(message, sizeof message, "cannot write into '%s': %s", o->output_dir, strerror(errno));
		ok = 0;
	} else if (rank == 0 && (stat(o->output_dir, &folder) != 0 || !S_ISDIR(folder.st_mode))) {
		/* a file, FIFO or device of that name: said now, not after the run */
		snprintf(message, sizeof message, "cannot create '%s': it exists and is not a folder", o->output_dir);
		ok = 0;
	}
	if (!agree(ok, message, rank)) {
		MPI_Finalize();
		return 1;
	}

	hello me = { .pid = getpid() };
	if (gethostname(me.host, sizeof me.host - 1) != 0)
		snprintf(me.host, sizeof me.host, "unknown");
	hello *hellos = rank == 0 ? calloc((size_t)size, sizeof *hellos) : NULL;
	MPI_Gather(&me, (int)sizeof me, MPI_BYTE, hellos, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
	hello root = me;
	MPI_Bcast(&root, (int)sizeof root, MPI_BYTE, 0, MPI_COMM_WORLD);
	int someone_died = 0;

	/* Ranks that share a node (shared memory) form one group. */
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	int node_rank = 0, node_size = 1;
	MPI_Comm_rank(node, &node_rank);
	MPI_Comm_size(node, &node_size);
	int64_t *node_pids = calloc((size_t)node_size, sizeof *node_pids);
	MPI_Allgather(&me.pid, 1, MPI_INT64_T, node_pids, 1, MPI_INT64_T, node);

	int cpus[CPU_SETSIZE];
	int ncpus = node_cpus(cpus, CPU_SETSIZE);
	if (ncpus <= 0) {
		cpus[0] = sched_getcpu();
		ncpus = 1;
	}
	const char *sharing = "alone";
	char detail[1400], cpu_text[256];
	int *mine = cpus, nmine = ncpus;
	bool turns = false;
	cpu_list_text(cpus, ncpus, cpu_text, sizeof cpu_text);
	if (node_size == 1) {
		snprintf(detail, sizeof detail, "alone on %s, on its CPUs %s", me.host, cpu_text);
	} else if (!strcmp(o->sharing, "split") && ncpus >= node_size) {
		int per = ncpus / node_size;
		mine = cpus + node_rank * per;
		nmine = node_rank == node_size - 1 ? ncpus - node_rank * per : per;
		sharing = "split";
		char all[256];
		snprintf(all, sizeof all, "%s", cpu_text);
		cpu_list_text(mine, nmine, cpu_text, sizeof cpu_text);
		snprintf(detail, sizeof detail, "%d ranks share %s and split its CPUs %s: this rank has %s while the others measure beside it", node_size,
		         me.host, all, cpu_text);
	} else {
		sharing = "turns";
		turns = true;
		snprintf(detail, sizeof detail, "%d ranks share %s and take turns (this is turn %d of %d), each on all its CPUs %s%s", node_size, me.host,
		         node_rank + 1, node_size, cpu_text,
		         !strcmp(o->sharing, "split") ? "; --share split asked, but the node has fewer CPUs than ranks" : "");
	}
	pin_to(mine, nmine);

	heartbeat beat = { .running = false };
	bool beating = rank != 0 && provided >= MPI_THREAD_MULTIPLE;
	if (beating)
		heartbeat_start(&beat);

	/* Rehearsing a dead node: the named rank kills itself once it has said
	 * hello, exactly as a crashed node would vanish (docs/cluster.md). */
	const char *kill_rank = secure_getenv("PLUMB_CLUSTER_KILL_RANK");
	if (kill_rank && atoi(kill_rank) == rank && rank != 0)
		raise(SIGKILL);

	if (turns)
		wait_turn(node, node_rank, node_pids, me.host);
	output_report *reports[CLUSTER_MAX_SECTIONS] = { 0 };
	char failure_text[CLUSTER_MAX_SECTIONS][PLUMB_MESSAGE_MAX];
	const char *failures[CLUSTER_MAX_SECTIONS] = { 0 };
	char who[64];
	snprintf(who, sizeof who, "cluster rank %d", rank);
	size_t failed = report_run_sections(program, who, names, count, o->quick, NULL, reports, failure_text);
	for (size_t i = 0; i < count; i++)
		failures[i] = failure_text[i][0] ? failure_text[i] : NULL;
	if (turns && node_rank + 1 < node_size) {
		int token = 1;
		MPI_Request request;
		MPI_Isend(&token, 1, MPI_INT, node_rank + 1, TAG_TURN, node, &request);
		wait_lazily(&request);
	}
	cpu_list_text(mine, nmine, cpu_text, sizeof cpu_text);
	cluster_placement placement = { rank, me.host, cpu_text, sharing, detail, node_size };
	output_report *row = cluster_node_report(&placement, reports, names, failures, count);
	for (size_t i = 0; i < count; i++)
		output_report_free(reports[i]);
	char *json = NULL;
	size_t json_length = 0;
	FILE *m = open_memstream(&json, &json_length);
	if (m) {
		if (row)
			output_write(row, OUTPUT_JSON, m, &status);
		fclose(m);
	}
	output_report_free(row);
	if (beating)
		heartbeat_stop(&beat);

	int exit_code = 0;
	(void)failed;
	if (rank != 0) {
		MPI_Request request;
		MPI_Isend(json ? json : "", json ? (int)json_length : 0, MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD, &request);
		wait_lazily(&request);
		/* Rank 0 says when it is done, and whether a rank died; until
		 * then this rank waits asleep (or until rank 0 itself is gone). */
		MPI_Irecv(&someone_died, 1, MPI_INT, 0, TAG_FINISH, MPI_COMM_WORLD, &request);
		int done = 0;
		while (!done) {
			if (MPI_Test(&request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || (!done && process_gone(root.host, me.host, root.pid))) {
				someone_died = 1;
				break;
			}
			if (!done)
				nap();
		}
	} else {
		gathered *g = calloc((size_t)size, sizeof *g);
		cluster_row *rows = calloc((size_t)size, sizeof *rows);
		output_report **nodes = calloc((size_t)size, sizeof *nodes);
		if (!g || !rows || !nodes) {
			fprintf(stderr, "plumb cluster: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		g[0].json = json;
		json = NULL;
		g[0].done = true;
		gather_results(g, size, hellos, me.host, o->rank_timeout);
		size_t missing = 0;
		for (int r = 0; r < size; r++) {
			rows[r].rank = r;
			rows[r].host = hellos[r].host;
			if (g[r].json && g[r].json[0] && output_report_parse_json(g[r].json, &nodes[r], &status) != 0)
				snprintf(g[r].failure, sizeof g[r].failure, "rank %d's results are unreadable: %s", r, status.message);
			else if (g[r].json && !g[r].json[0])
				snprintf(g[r].failure, sizeof g[r].failure, "rank %d could not build its results (out of memory)", r);
			rows[r].node = nodes[r];
			rows[r].failure = g[r].failure[0] ? g[r].failure : NULL;
			if (!nodes[r]) {
				missing++;
				fprintf(stderr, "plumb cluster: %s\n", g[r].failure[0] ? g[r].failure : "a rank sent nothing");
			}
		}
		someone_died = missing != 0;
		for (int r = 1; r < size; r++)
			if (nodes[r] || !g[r].failure[0]) {
				MPI_Request request;
				MPI_Isend(&someone_died, 1, MPI_INT, r, TAG_FINISH, MPI_COMM_WORLD, &request);
				MPI_Request_free(&request);
			}
		output_report *c = cluster_build(rows, (size_t)size);
		char json_path[4096], html_path[4096];
		snprintf(json_path, sizeof json_path, "%s/cluster.json", o->output_dir);
		snprintf(html_path, sizeof html_path, "%s/cluster.html", o->output_dir);
		if (!c) {
			fprintf(stderr, "plumb cluster: out of memory\n");
			exit_code = 1;
		} else if (output_write_file(c, OUTPUT_JSON, json_path, &status) != 0 || cluster_write_html(html_path, c, &status) != 0) {
			fprintf(stderr, "plumb cluster: %s\n", status.message);
			exit_code = 1;
		} else {
			const output_table *outliers = output_table_find(c, "outliers");
			size_t partial = 0;
			for (int r = 0; r < size; r++) {
				const output_table *s = nodes[r] ? output_table_find(nodes[r], "sections") : NULL;
				bool any = false;
				for (size_t q = 0; s && q < output_row_count(s); q++)
					any |= output_cell_kind(s, q, 1) == CELL_STATUS;
				partial += any;
			}
			printf("cluster: %d rank%s", size, size == 1 ? "" : "s");
			if (missing)
				printf(", %zu without results", missing);
			if (partial)
				printf(", %zu with sections that could not run", partial);
			printf("; %zu outlier%s\n", output_row_count(outliers), output_row_count(outliers) == 1 ? "" : "s");
			printf("cluster: %s\ncluster: %s\n", json_path, html_path);
			if (missing || partial)
				exit_code = 1;
		}
		output_report_free(c);
		for (int r = 0; r < size; r++) {
			output_report_free(nodes[r]);
			free(g[r].json);
		}
		free(nodes);
		free(rows);
		free(g);
	}
	free(json);
	free(hellos);
	free(node_pids);
	MPI_Comm_free(&node);
	/* MPI_Finalize waits for every rank, the dead one too (Open MPI 4 gives
	 * up after two minutes): when a rank died the results are already
	 * written, so the others leave without it. */
	if (someone_died) {
		fflush(stdout);
		fflush(stderr);
		_exit(rank == 0 ? 1 : 0);
	}
	MPI_Finalize();
	return rank == 0 ? exit_code : 0;
}
