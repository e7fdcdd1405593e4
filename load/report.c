// SPDX-License-Identifier: GPL-2.0
/*
 * One result, two renderings: aligned "label  value unit" lines for people,
 * one JSON object on one line for scripts (bench/ reads it with sed, so the
 * layout "key": value stays flat).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "jsonw.h"
#include "log.h"
#include "load.h"
#include "paths.h"
#include "util.h"

enum kind { K_STR, K_U64, K_DOUBLE, K_BOOL, K_INTS };

struct entry {
	const char *key;
	const char *label;
	const char *unit;
	enum kind kind;
	char *str;
	uint64_t u64;
	double dbl;
	bool b;
	int *ints;
	size_t nr_ints;
};

struct load_report {
	struct entry *entries;
	size_t n, alloc;
	int error;
};

struct load_report *load_report_new(void)
{
	return calloc(1, sizeof(struct load_report));
}

void load_report_free(struct load_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->entries[i].str);
		free(r->entries[i].ints);
	}
	free(r->entries);
	free(r);
}

static struct entry *add(struct load_report *r, const char *key, const char *label, enum kind kind)
{
	struct entry *e;

	if (!r || r->error)
		return NULL;
	if (grow_array((void **)&r->entries, &r->alloc, sizeof(*r->entries), r->n + 1) < 0) {
		r->error = -ENOMEM;
		return NULL;
	}
	e = &r->entries[r->n++];
	*e = (struct entry){ .key = key, .label = label, .kind = kind };
	return e;
}

void load_report_add_str(struct load_report *r, const char *key, const char *label,
			 const char *v)
{
	struct entry *e = add(r, key, label, K_STR);

	if (e && !(e->str = strdup(v ? v : "")))
		r->error = -ENOMEM;
}

void load_report_add_u64(struct load_report *r, const char *key, const char *label,
			 uint64_t v, const char *unit)
{
	struct entry *e = add(r, key, label, K_U64);

	if (e) {
		e->u64 = v;
		e->unit = unit;
	}
}

void load_report_add_double(struct load_report *r, const char *key, const char *label,
			    double v, const char *unit)
{
	struct entry *e = add(r, key, label, K_DOUBLE);

	if (e) {
		e->dbl = v;
		e->unit = unit;
	}
}

void load_report_add_bool(struct load_report *r, const char *key, const char *label, bool v)
{
	struct entry *e = add(r, key, label, K_BOOL);

	if (e)
		e->b = v;
}

void load_report_add_ints(struct load_report *r, const char *key, const char *label,
			  const int *v, size_t n)
{
	struct entry *e = add(r, key, label, K_INTS);

	if (!e || n == 0)
		return;
	e->ints = malloc(n * sizeof(*v));
	if (!e->ints) {
		r->error = -ENOMEM;
		return;
	}
	memcpy(e->ints, v, n * sizeof(*v));
	e->nr_ints = n;
}

/* "0-3,6": a CPU list the way the kernel prints one. */
static void print_ranges(FILE *f, const int *v, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && v[j + 1] == v[j] + 1)
			j++;
		fprintf(f, "%s%d", i ? "," : "", v[i]);
		if (j > i)
			fprintf(f, "-%d", v[j]);
		i = j + 1;
	}
}

static void print_json(const struct load_report *r, FILE *f)
{
	struct jsonw w;

	jsonw_init(&w, f);
	jsonw_object(&w, NULL);
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->entries[i];

		switch (e->kind) {
		case K_STR:
			jsonw_str(&w, e->key, e->str);
			break;
		case K_U64:
			jsonw_uint(&w, e->key, e->u64);
			break;
		case K_DOUBLE:
			jsonw_numg(&w, e->key, 9, isfinite(e->dbl) ? e->dbl : NAN);
			break;
		case K_BOOL:
			jsonw_bool(&w, e->key, e->b);
			break;
		case K_INTS:
			jsonw_array(&w, e->key);
			for (size_t k = 0; k < e->nr_ints; k++)
				jsonw_int(&w, NULL, e->ints[k]);
			jsonw_end(&w);
			break;
		}
	}
	jsonw_end(&w);
	jsonw_finish(&w);
}

static void print_text(const struct load_report *r, FILE *f)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct entry *e = &r->entries[i];

		if (!e->label)
			continue;
		fprintf(f, "%-30s ", e->label);
		switch (e->kind) {
		case K_STR:
			fputs(e->str, f);
			break;
		case K_U64:
			fprintf(f, "%" PRIu64, e->u64);
			break;
		case K_DOUBLE:
			fprintf(f, "%.3f", e->dbl);
			break;
		case K_BOOL:
			fputs(e->b ? "yes" : "no", f);
			break;
		case K_INTS:
			print_ranges(f, e->ints, e->nr_ints);
			break;
		}
		if (e->unit)
			fprintf(f, " %s", e->unit);
		fputc('\n', f);
	}
}

int load_job_run_report(struct load_job *job, bool json, load_report_fill_t fill)
{
	struct load_report *rep;
	int r;

	rep = load_report_new();
	if (!rep)
		return log_oom();
	r = load_job_run(job);
	if (r >= 0)
		r = fill(rep, job);
	if (r >= 0) {
		r = load_report_print(rep, stdout, json);
		if (r < 0)
			log_error_errno(r, "Failed to print the result: %m");
	}
	load_report_free(rep);
	return r;
}

int load_report_print(const struct load_report *r, FILE *f, bool json)
{
	if (!r)
		return -ENOMEM;
	if (r->error)
		return r->error;
	if (json)
		print_json(r, f);
	else
		print_text(r, f);
	return fflush(f) == 0 ? 0 : -errno;
}

const char *load_hot_path(const char *workload)
{
	for (int p = 0; p < paths_nr(); p++)
		if (path_get(p)->reproducer && strcmp(path_get(p)->reproducer, workload) == 0)
			return path_get(p)->id;
	return "none";
}

void load_report_add_job(struct load_report *r, const struct load_job *job)
{
	load_report_add_str(r, "workload", "workload", job->name);
	load_report_add_str(r, "hot_path", "hot path", load_hot_path(job->name));
	load_report_add_ints(r, "cpus", "CPUs", job->opts->cpus, job->opts->nr_cpus);
	load_report_add_u64(r, "workers", "workers", job->nr_workers, NULL);
	load_report_add_u64(r, "processes", "processes", job->fork_groups ? job->nr_groups : 1, NULL);
	load_report_add_double(r, "seconds", "measured", load_job_seconds(job), "s");
	load_report_add_bool(r, "interrupted", "interrupted (partial result)", job->interrupted);
}

void load_report_add_metric(struct load_report *r, const char *metric, const char *label,
			    double value, const char *unit, bool higher_is_better)
{
	load_report_add_str(r, "metric", NULL, metric);
	load_report_add_double(r, "value", label, value, unit);
	load_report_add_str(r, "unit", NULL, unit);
	load_report_add_bool(r, "higher_is_better", NULL, higher_is_better);
}
