// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "snapshot.h"
#include "util.h"

/* The object built from mm-snapshot.bpf.c (empty when built without clang). */
extern const unsigned char mm_snapshot_bpf[];
extern const size_t mm_snapshot_bpf_len;

/* As daemon/mm-snapshot.bpf.c writes them. */
struct mm_snapshot_record {
	uint64_t mm;
	uint32_t tgid;
	uint32_t pad;
	char comm[16];
};

struct mm_snapshot {
	struct bpf_object *obj;
	struct bpf_link *link;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf explains every failed probe at length; what decides is
	 * logged by the caller, the rest is debug. */
	(void)level;
	return log_internalv(LOG_DEBUG, 0, fmt, ap);
}

struct mm_snapshot *mm_snapshot_new(struct event_status_list *status)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = "mm_snapshot");
	struct mm_snapshot *s;
	struct bpf_program *prog;
	int r;

	if (!mm_snapshot_bpf_len) {
		event_status_add(status, "bpf", "task_iter", "snapshot", false,
				 "built without clang: no BPF object");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		log_oom();
		return NULL;
	}
	libbpf_set_print(libbpf_print);
	s->obj = bpf_object__open_mem(mm_snapshot_bpf, mm_snapshot_bpf_len, &opts);
	if (!s->obj) {
		r = -errno;
		event_status_add(status, "bpf", "task_iter", "snapshot", false,
				 "the BPF object does not open: %s", strerror(-r));
		goto fail;
	}
	r = bpf_object__load(s->obj);
	if (r < 0) {
		event_status_add(status, "bpf", "task_iter", "snapshot", false,
				 "the kernel refused the task iterator: %s%s", strerror(-r),
				 r == -EPERM ? " (needs CAP_BPF and CAP_PERFMON, and bpf() allowed)" : "");
		goto fail;
	}
	prog = bpf_object__find_program_by_name(s->obj, "mm_snapshot");
	s->link = prog ? bpf_program__attach_iter(prog, NULL) : NULL;
	if (!s->link) {
		event_status_add(status, "bpf", "task_iter", "snapshot", false,
				 "attaching the task iterator failed: %s", strerror(errno));
		goto fail;
	}
	event_status_add(status, "bpf", "task_iter", "snapshot", true,
			 "every live mm_struct listed as each window opens");
	return s;
fail:
	mm_snapshot_free(s);
	return NULL;
}

void mm_snapshot_free(struct mm_snapshot *s)
{
	if (!s)
		return;
	bpf_link__destroy(s->link);
	bpf_object__close(s->obj);
	free(s);
}

int mm_snapshot_take(struct mm_snapshot *s, struct learner *l, int64_t now_wall)
{
	struct mm_snapshot_record rec[128];
	int fd, n = 0;
	ssize_t len;

	fd = bpf_iter_create(bpf_link__fd(s->link));
	if (fd < 0)
		return log_warning_errno(errno, "Failed to run the task iterator: %m, ignoring");
	learner_snapshot_begin(l);
	while ((len = read(fd, rec, sizeof(rec))) > 0) {
		for (size_t i = 0; i < (size_t)len / sizeof(rec[0]); i++) {
			struct learn_event ev = {
				.type = LEARN_MM_SNAPSHOT,
				.ts_ns = now_wall,
				.pid = (int32_t)rec[i].tgid,
				.addr = rec[i].mm,
			};

			memcpy(ev.comm, rec[i].comm, sizeof(ev.comm) - 1);
			learner_feed(l, &ev);
			n++;
		}
	}
	if (len < 0) {
		int err = errno;

		close(fd);
		/* Half a list must not declare the other half dead. */
		learner_snapshot_abort(l);
		return log_warning_errno(err, "Failed to read the task iterator: %m, ignoring");
	}
	close(fd);
	learner_snapshot_end(l, now_wall);
	return n;
}
