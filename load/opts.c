// SPDX-License-Identifier: GPL-2.0
/* The options every subcommand shares, and CPU lists. */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "load.h"
#include "log.h"
#include "util.h"

enum {
	OPT_COMMON_DURATION = 'd',
	OPT_COMMON_LOOPS = 'n',
	OPT_COMMON_WORKERS = 't',
	OPT_COMMON_CPUS = 'c',
	OPT_COMMON_JSON = 'j',
	OPT_COMMON_HELP = 'h',
	OPT_COMMON_VERBOSE = 'v',
	OPT_COMMON_PROGRESS = 0x1000,	/* long only, above the workloads' own */
};

static int cpus_from_set(const cpu_set_t *set, int **ret_cpus, size_t *ret_n)
{
	size_t n = CPU_COUNT(set), k = 0;
	int *cpus;

	if (n == 0)
		return -EINVAL;
	cpus = calloc(n, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	for (int c = 0; c < CPU_SETSIZE && k < n; c++)
		if (CPU_ISSET(c, set))
			cpus[k++] = c;
	*ret_cpus = cpus;
	*ret_n = k;
	return 0;
}

int load_affinity_cpus(int **ret_cpus, size_t *ret_n)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	return cpus_from_set(&set, ret_cpus, ret_n);
}

int load_parse_cpus(const char *s, int **ret_cpus, size_t *ret_n)
{
	_cleanup_free_ char *copy = strdup(s);
	cpu_set_t want, allowed;
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -errno;
	CPU_ZERO(&want);
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t a, b;

		if (dash)
			*dash = '\0';
		if (parse_u64(tok, &a) < 0 || parse_u64(dash ? dash + 1 : tok, &b) < 0 ||
		    a > b || b >= CPU_SETSIZE)
			return -EINVAL;
		for (uint64_t c = a; c <= b; c++) {
			if (!CPU_ISSET(c, &allowed))
				return -ENXIO;	/* offline, or outside our cpuset */
			CPU_SET(c, &want);
		}
	}
	return cpus_from_set(&want, ret_cpus, ret_n);
}

void load_opts_done(struct load_opts *opts)
{
	free(opts->cpus);
	opts->cpus = NULL;
	opts->nr_cpus = 0;
}

void load_opts_help(const char *workers_name, const char *workers_help)
{
	printf("Common options:\n"
	       "  -d, --duration=TIME   run this long (\"10s\", \"500ms\", \"2m\"; default 10s,\n"
	       "                        none with --loops); 0 runs until Ctrl-C or --loops\n"
	       "  -n, --loops=N         stop each worker after N loops (default: no limit)\n"
	       "  -%c, --%s=N%*s %s\n"
	       "  -c, --cpus=LIST       CPUs to use and pin to, e.g. 0-3,6 (default: all\n"
	       "                        CPUs this process may run on)\n"
	       "  -j, --json            print the result as one JSON object\n"
	       "      --progress=TIME   every TIME (e.g. 250ms) print \"progress T OPS\" on\n"
	       "                        stderr: T on the clock of /proc/uptime, OPS the\n"
	       "                        workload's unit of work so far (for benchmarks)\n"
	       "  -v, --verbose         log what is set up and torn down\n"
	       "  -h, --help            show this help\n\n"
	       "Ctrl-C (SIGINT) or SIGTERM stops the run early; the partial result is printed\n"
	       "(\"interrupted\": true) and the exit status is 0. Exit status: 0 done, 1 failed,\n"
	       "2 usage, 3 the kernel lacks the feature, 4 the feature is switched off.\n",
	       workers_name[0], workers_name, (int)(13 - strlen(workers_name)), "", workers_help);
}

/* The common options, then the workload's own extra ones. Caller frees. */
static struct option *load_longopts_new(const char *workers_name, const struct option *extra)
{
	const struct option common[] = {
		{ "duration", required_argument, NULL, OPT_COMMON_DURATION },
		{ "loops", required_argument, NULL, OPT_COMMON_LOOPS },
		{ workers_name, required_argument, NULL, OPT_COMMON_WORKERS },
		{ "cpus", required_argument, NULL, OPT_COMMON_CPUS },
		{ "json", no_argument, NULL, OPT_COMMON_JSON },
		{ "progress", required_argument, NULL, OPT_COMMON_PROGRESS },
		{ "verbose", no_argument, NULL, OPT_COMMON_VERBOSE },
		{ "help", no_argument, NULL, OPT_COMMON_HELP },
	};
	struct option *all;
	size_t nr_extra = 0;

	while (extra && extra[nr_extra].name)
		nr_extra++;
	all = calloc(ARRAY_SIZE(common) + nr_extra + 1, sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, common, sizeof(common));
	if (nr_extra)
		memcpy(all + ARRAY_SIZE(common), extra, nr_extra * sizeof(*extra));
	return all;
}

static int load_opt_cpus(struct load_opts *opts, const char *cmd, const char *arg)
{
	int r;

	free(opts->cpus);
	opts->cpus = NULL;
	r = load_parse_cpus(arg, &opts->cpus, &opts->nr_cpus);
	if (r == -ENXIO) {
		log_error("%s: --cpus '%s' names a CPU that is offline or outside this "
			  "process's affinity", cmd, arg);
		return -EINVAL;
	}
	if (r < 0) {
		log_error_errno(r, "%s: invalid --cpus '%s': %m", cmd, arg);
		return -EINVAL;
	}
	return 0;
}

/*
 * One common option other than --help: 0 when set, -EINVAL once logged,
 * -ENOENT when opt is not a common option.
 */
static int load_opt_common(struct load_opts *opts, int opt, const char *arg, const char *cmd,
			   const char *workers_name, bool *have_duration)
{
	uint64_t u;

	switch (opt) {
	case OPT_COMMON_DURATION:
		if (parse_duration_ns(arg, &opts->duration_ns) < 0)
			return log_error_errno(EINVAL, "%s: invalid --duration '%s'", cmd, arg);
		*have_duration = true;
		return 0;
	case OPT_COMMON_LOOPS:
		if (parse_u64(arg, &opts->loops) < 0 || opts->loops == 0)
			return log_error_errno(EINVAL, "%s: invalid --loops '%s'", cmd, arg);
		return 0;
	case OPT_COMMON_WORKERS:
		if (parse_u64(arg, &u) < 0 || u == 0 || u > 4096)
			return log_error_errno(EINVAL, "%s: --%s wants 1..4096, not '%s'", cmd,
					       workers_name, arg);
		opts->workers = u;
		return 0;
	case OPT_COMMON_CPUS:
		return load_opt_cpus(opts, cmd, arg);
	case OPT_COMMON_JSON:
		opts->json = true;
		return 0;
	case OPT_COMMON_PROGRESS:
		if (parse_duration_ns(arg, &opts->progress_ns) < 0 ||
		    opts->progress_ns < 10 * NSEC_PER_MSEC)
			return log_error_errno(EINVAL, "%s: --progress wants a period of 10ms or "
					       "more, not '%s'", cmd, arg);
		return 0;
	case OPT_COMMON_VERBOSE:
		log_set_max_level(LOG_DEBUG);
		return 0;
	default:
		return -ENOENT;
	}
}

int load_opts_parse(int argc, char **argv, struct load_opts *opts, const char *workers_name,
		    const struct option *extra,
		    int (*parse_extra)(int opt, const char *arg, void *userdata),
		    void *userdata, void (*help)(void))
{
	_cleanup_free_ struct option *all = NULL;
	char shortopts[16];
	const char *cmd = argv[0];
	char prog[96];
	bool have_duration = false;
	int r, opt;

	*opts = (struct load_opts){ .duration_ns = LOAD_DEFAULT_DURATION_NS };

	all = load_longopts_new(workers_name, extra);
	if (!all)
		return log_oom();
	snprintf(shortopts, sizeof(shortopts), "+d:n:%c:c:jvh", workers_name[0]);

	optind = 1;
	snprintf(prog, sizeof(prog), "mmhitm-load %s", cmd);
	while ((opt = cli_getopt(argc, argv, shortopts, all, prog)) >= 0) {
		if (opt == workers_name[0])
			opt = OPT_COMMON_WORKERS;
		if (opt == OPT_COMMON_HELP) {
			help();
			load_opts_done(opts);
			return 1;
		}
		if (opt == '?')
			goto usage;
		r = load_opt_common(opts, opt, optarg, cmd, workers_name, &have_duration);
		if (r == -ENOENT)
			r = parse_extra ? parse_extra(opt, optarg, userdata) : -EINVAL;
		if (r < 0)
			goto usage;
	}
	if (optind < argc) {
		log_error("%s: unexpected argument '%s'", cmd, argv[optind]);
		goto usage;
	}
	/* A fixed amount of work is not cut short by the default duration. */
	if (opts->loops && !have_duration)
		opts->duration_ns = 0;
	if (!opts->cpus) {
		r = load_affinity_cpus(&opts->cpus, &opts->nr_cpus);
		if (r < 0)
			return log_error_errno(r, "Failed to read the CPU affinity: %m");
	}
	return 0;

usage:
	fprintf(stderr, "'mmhitm-load %s --help' lists the options.\n", cmd);
	load_opts_done(opts);
	return LOAD_EXIT_USAGE;
}
