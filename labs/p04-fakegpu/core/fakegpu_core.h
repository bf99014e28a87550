/* SPDX-License-Identifier: MIT */
/*
 * fakegpu_core — the device semantics of fakegpu, in C that depends on
 * neither the kernel nor libc: per-open contexts, a handle table, a per-context
 * quota and a device-wide pool, ordered sequence numbers, completion 10 ms after
 * submit, the WAIT fence, statistics.
 *
 * The same file is compiled into the kernel module (kernel/), the FUSE daemon
 * (fakegpud) and the unit tests. The embedder provides memory, the clock and the
 * locks, and does the blocking:
 *   - every call on a context must hold that context's lock (the kernel: a mutex
 *     per open file; fakegpud: one mutex);
 *   - the core itself takes the device lock (ops->dev_lock) around the pool and
 *     the statistics;
 *   - fg_dispatch() never sleeps. WAIT on an unfinished seqno returns
 *     FG_WAIT_BLOCK and the embedder sleeps until fg_wait_done() (kernel: a wait
 *     queue woken by a timer; fakegpud: a condition variable).
 */
#ifndef FAKEGPU_CORE_H
#define FAKEGPU_CORE_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/errno.h>
#else
#include <errno.h>
#include <stddef.h>
#include <linux/types.h>
#endif

#include "fakegpu_ioctl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct fg_config {
	__u64 mem_total;   /* device pool, bytes */
	__u64 ctx_quota;   /* per-context quota, bytes */
	__u32 max_handles; /* handle-table size per context */
	__u32 pad;
};

/* Defaults: also the kernel module's parameter defaults. */
#define FG_DEFAULT_MEM_TOTAL_MB 64u
#define FG_DEFAULT_CTX_QUOTA_MB 16u
#define FG_DEFAULT_MAX_HANDLES 64u
#define FG_MAX_HANDLES_LIMIT 65536u

struct fg_ops {
	void *(*zalloc)(size_t bytes); /* zeroed memory, NULL on failure */
	void (*free)(void *p);
	void (*dev_lock)(void *cookie);
	void (*dev_unlock)(void *cookie);
	void *cookie;
};

/* Device-wide counters; the first four are gauges, the rest only grow. */
struct fg_stats {
	__u64 contexts;
	__u64 buffers;
	__u64 bytes_in_use;
	__u64 submits;
	__u64 completed;
	__u64 allocs;
	__u64 frees;
	__u64 quota_rejections; /* ENOSPC */
	__u64 pool_rejections;  /* ENOMEM */
	__u64 invalid_requests; /* EINVAL and ENOTTY */
};

struct fg_device {
	struct fg_config cfg;
	const struct fg_ops *ops;
	__u32 next_handle; /* the next handle to hand out; 0 once exhausted */
	__u32 pad;
	struct fg_stats stats;
};

struct fg_buffer {
	__u32 handle; /* 0: free slot */
	__u32 pad;
	__u64 size;
	__u64 last_seq; /* last job that used it; FREE is EBUSY until it completes */
};

struct fg_context {
	struct fg_device *dev;
	struct fg_buffer *bufs; /* cfg.max_handles slots */
	__u32 live;             /* used slots */
	__u32 pad;
	__u64 used;             /* bytes */
	__u64 submitted_seq;
	__u64 completed_seq;
	__u64 *deadline; /* FAKEGPU_MAX_INFLIGHT slots: deadline of seq s at s % MAX */
};

/* Returned by fg_dispatch() for a WAIT that must block. */
#define FG_WAIT_BLOCK 1

struct fg_wait_req {
	__u64 seqno;
	__u32 timeout_ms; /* 0: none */
	__u32 pad;
};

/* 0, or -EINVAL when the configuration is unusable (zero sizes, quota > pool...). */
int fg_config_check(const struct fg_config *cfg);
void fg_device_init(struct fg_device *dev, const struct fg_config *cfg, const struct fg_ops *ops);
/* A snapshot of the counters, taken under the device lock. */
void fg_device_stats(struct fg_device *dev, struct fg_stats *out);

/* NULL when memory is short. */
struct fg_context *fg_context_create(struct fg_device *dev);
/* Returns every buffer to the pool and forgets unfinished jobs. */
void fg_context_destroy(struct fg_context *ctx);

/* The struct size for one of the five commands, or -ENOTTY for any other number
 * (including a known number with the wrong direction or size). */
long fg_cmd_size(unsigned int cmd);

/* Completes the jobs whose deadline is <= now_ns, in order; returns how many. */
__u32 fg_complete_due(struct fg_context *ctx, __u64 now_ns);
/* 1 and the deadline of the oldest unfinished job, or 0 when none is pending. */
int fg_next_deadline(const struct fg_context *ctx, __u64 *deadline_ns);
/* 1 once completed_seq >= seqno. */
int fg_wait_done(const struct fg_context *ctx, __u64 seqno);

/* Runs one command on a kernel-side copy of the argument (buf holds
 * fg_cmd_size(cmd) bytes, copied in for _IOW, written for _IOR). Returns 0,
 * -errno, or FG_WAIT_BLOCK with *wait filled in. Completes due jobs first. */
long fg_dispatch(struct fg_context *ctx, unsigned int cmd, void *buf, __u64 now_ns,
		 struct fg_wait_req *wait);

/* The statistics as "name value" lines (the sysfs attribute); returns the length. */
int fg_format_stats(const struct fg_stats *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* FAKEGPU_CORE_H */
