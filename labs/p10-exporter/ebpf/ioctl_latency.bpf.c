// SPDX-License-Identifier: GPL-2.0
/* ioctl_latency.bpf.c — ioctl latency per device file and request code.
 *
 * sys_enter_ioctl resolves the fd to its struct file (CO-RE reads through
 * task->files, so one object runs on any kernel with BTF), keeps the call only if
 * the file is one of the targets user space put in `targets`, and stamps the
 * thread. sys_exit_ioctl adds the elapsed time to a log2 histogram keyed by
 * (target, request code). User space reads `hists` at the end; nothing here
 * allocates per call beyond the in-flight entry. */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ioctl_latency.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_probe_read_kernel is GPL-only */

#define S_IFMT 00170000
#define S_IFCHR 0020000

struct inflight {
	__u64 start_ns;
	struct ioctl_hist_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOCTL_LATENCY_MAX_TARGETS);
	__type(key, struct ioctl_target_key);
	__type(value, __u32);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOCTL_LATENCY_MAX_INFLIGHT);
	__type(key, __u64); /* pid_tgid: one syscall at a time per thread */
	__type(value, struct inflight);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, IOCTL_LATENCY_MAX_KEYS);
	__type(key, struct ioctl_hist_key);
	__type(value, struct ioctl_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, IOCTL_DROP_KINDS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static const struct ioctl_hist zero_hist;

static void count_drop(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &kind);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* floor(log2(v)) for v >= 1, without loops the verifier would have to unroll. */
static __u32 log2_u64(__u64 v)
{
	__u32 r = 0, shift;
	shift = (v > 0xffffffffull) << 5; v >>= shift; r |= shift;
	shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
	shift = (v > 0xff) << 3; v >>= shift; r |= shift;
	shift = (v > 0xf) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

/* The struct file behind `fd` in the current task, or NULL. */
static struct file *file_of_fd(unsigned int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *file = NULL;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) != 0)
		return NULL;
	return file;
}

SEC("tracepoint/syscalls/sys_enter_ioctl")
int on_ioctl_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct file *file = file_of_fd((unsigned int)ctx->args[0]);
	struct ioctl_target_key tk = {};
	struct inflight in = {};
	struct inode *inode;
	__u32 *index;
	__u64 id;

	if (!file)
		return 0;
	inode = BPF_CORE_READ(file, f_inode);
	if (!inode)
		return 0;
	if ((BPF_CORE_READ(inode, i_mode) & S_IFMT) == S_IFCHR) {
		tk.dev = BPF_CORE_READ(inode, i_rdev);
		tk.ino = IOCTL_LATENCY_CHRDEV_INO;
	} else {
		tk.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		tk.ino = BPF_CORE_READ(inode, i_ino);
	}
	index = bpf_map_lookup_elem(&targets, &tk);
	if (!index)
		return 0;

	in.key.target = *index;
	in.key.cmd = (__u32)ctx->args[1];
	id = bpf_get_current_pid_tgid();
	in.start_ns = bpf_ktime_get_ns(); /* last, so the lookups above are not timed */
	if (bpf_map_update_elem(&starts, &id, &in, BPF_ANY) != 0)
		count_drop(IOCTL_DROP_INFLIGHT_FULL);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_ioctl")
int on_ioctl_exit(struct trace_event_raw_sys_exit *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = bpf_get_current_pid_tgid();
	struct inflight *in = bpf_map_lookup_elem(&starts, &id);
	struct ioctl_hist *h;
	__u64 delta;
	__u32 slot;

	if (!in)
		return 0;
	delta = now - in->start_ns;
	h = bpf_map_lookup_elem(&hists, &in->key);
	if (!h) {
		/* NOEXIST: another CPU may have created it in between; then use that one. */
		bpf_map_update_elem(&hists, &in->key, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, &in->key);
		if (!h) {
			count_drop(IOCTL_DROP_KEYS_FULL);
			bpf_map_delete_elem(&starts, &id);
			return 0;
		}
	}
	slot = delta > 1 ? log2_u64(delta) : 0;
	if (slot >= IOCTL_LATENCY_SLOTS)
		slot = IOCTL_LATENCY_SLOTS - 1;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->sum_ns, delta);
	if (ctx->ret < 0)
		__sync_fetch_and_add(&h->errors, 1);
	/* count last: a reader that sees count N sees at least N calls in the slots */
	__sync_fetch_and_add(&h->count, 1);
	bpf_map_delete_elem(&starts, &id);
	return 0;
}
