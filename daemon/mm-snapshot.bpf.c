// SPDX-License-Identifier: GPL-2.0
/*
 * Every live process's mm_struct, for windowed recording: a BPF task
 * iterator that mmhitmd runs as a window opens. One record per thread
 * group leader with an mm (kernel threads have none). Built with clang
 * -target bpf; the structures below are relocated against the running
 * kernel's BTF (CO-RE), so one object fits every kernel.
 */
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

struct mm_struct;
struct seq_file;

struct task_struct {
	int pid;
	int tgid;
	struct mm_struct *mm;
	char comm[16];
} __attribute__((preserve_access_index));

struct bpf_iter_meta {
	struct seq_file *seq;
	__u64 session_id;
	__u64 seq_num;
} __attribute__((preserve_access_index));

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
} __attribute__((preserve_access_index));

/* daemon/snapshot.c reads these; keep the two in step. */
struct mm_snapshot_record {
	__u64 mm;
	__u32 tgid;
	__u32 pad;
	char comm[16];
};

SEC("iter/task")
int mm_snapshot(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct mm_snapshot_record r = {};

	if (!t || t->pid != t->tgid || !t->mm)
		return 0;
	r.mm = (__u64)t->mm;
	r.tgid = t->tgid;
	bpf_probe_read_kernel(r.comm, sizeof(r.comm), t->comm);
	bpf_seq_write(seq, &r, sizeof(r));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
