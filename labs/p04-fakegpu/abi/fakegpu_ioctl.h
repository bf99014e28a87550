/* SPDX-License-Identifier: MIT */
/*
 * fakegpu_ioctl.h — the fakegpu user/kernel ABI, version 1.
 *
 * Shared verbatim by the kernel module (kernel/), the FUSE daemon (fakegpud),
 * the clients, and any C or C++ program. ABI files are forever, so:
 *   - every struct has a fixed size with explicit padding (no implicit holes,
 *     identical layout on i386 and x86-64: each size is asserted below);
 *   - every input struct has a `flags` or `reserved` field that must be zero
 *     today (EINVAL otherwise) so that later versions can give them meaning;
 *   - the ioctl numbers encode direction and size (_IOR/_IOW/_IOWR), magic 'F'
 *     (0x46, the same magic NVIDIA's driver uses, so raw strace lines look alike);
 *   - output structs are fully written by the device: padding and reserved
 *     fields come back as zero (no kernel stack leaks to user space).
 *
 * errno for every failure (the device returns -1 and sets errno):
 *   EFAULT    arg is NULL or not readable/writable for the struct's size
 *   ENOTTY    unknown command, or a known number with the wrong direction/size
 *   EINVAL    nonzero flags/reserved; ALLOC size 0 or > mem_total (can never
 *             succeed); handle 0, unknown, freed, or owned by another fd;
 *             WAIT for a seqno that was never submitted on this fd
 *   ENOSPC    ALLOC would exceed this fd's quota (ctx_quota), or its handle
 *             table (max_handles) is full — retry after FREE on this fd
 *   ENOMEM    the device-wide pool (mem_total) is exhausted by all fds
 *             together — retry later; the CUDA "out of memory" analogue
 *   EBUSY     FREE of a buffer that an unfinished job still uses — WAIT first
 *   EAGAIN    SUBMIT with FAKEGPU_MAX_INFLIGHT jobs already unfinished
 *   ETIMEDOUT WAIT gave up after timeout_ms
 *   EINTR     WAIT was interrupted by a signal
 *   EPERM     mmap of the fence page asked for write access
 *   ENODEV    mmap of the fence page on a transport that cannot share pages
 *             (the FUSE daemon: see the lab README)
 */
#ifndef FAKEGPU_IOCTL_H
#define FAKEGPU_IOCTL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FAKEGPU_ABI_VERSION 1u
#define FAKEGPU_IOC_MAGIC 'F'
#define FAKEGPU_DEVICE_NAME "fakegpu"

/* Jobs complete asynchronously this long after SUBMIT. */
#define FAKEGPU_JOB_LATENCY_NS 10000000ull
/* At most this many unfinished jobs per fd (SUBMIT → EAGAIN beyond). */
#define FAKEGPU_MAX_INFLIGHT 1024u

/* INFO: the device and this fd's context (output only). 96 bytes. */
struct fakegpu_info {
	__u32 abi_version;   /* FAKEGPU_ABI_VERSION */
	__u32 flags;         /* FAKEGPU_INFO_F_* */
	__u64 mem_total;     /* device pool, bytes */
	__u64 ctx_quota;     /* per-fd quota, bytes */
	__u64 ctx_used;      /* bytes allocated by this fd */
	__u64 submitted_seq; /* last seqno handed out on this fd (0: none yet) */
	__u64 completed_seq; /* last seqno completed on this fd */
	__u64 dev_mem_used;  /* bytes allocated by all fds */
	__u32 dev_contexts;  /* open fds on the device */
	__u32 dev_buffers;   /* live buffers on the device */
	__u32 max_handles;   /* handle-table size per fd */
	__u32 ctx_buffers;   /* live buffers of this fd */
	__u64 reserved[3];   /* zero */
};
#define FAKEGPU_INFO_F_FENCE_MMAP 0x1u /* mmap of the fence page is supported */

/* ALLOC: size in, handle out. 16 bytes. */
struct fakegpu_alloc {
	__u64 size;   /* in: bytes, 1..mem_total */
	__u32 handle; /* out: never 0, never reused, unique across all fds */
	__u32 flags;  /* in: must be 0 */
};

/* FREE: 8 bytes. */
struct fakegpu_free {
	__u32 handle;
	__u32 flags; /* must be 0 */
};

/* SUBMIT: a job that uses one buffer; seqno out. 16 bytes. */
struct fakegpu_submit {
	__u32 handle;
	__u32 flags;  /* must be 0 */
	__u64 seqno;  /* out: previous seqno of this fd + 1 */
};

/* WAIT: block until completed_seq >= seqno. 16 bytes. */
struct fakegpu_wait {
	__u64 seqno;      /* 0 returns at once */
	__u32 timeout_ms; /* 0: no timeout */
	__u32 flags;      /* must be 0 */
};

/* mmap(NULL, FAKEGPU_FENCE_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0): a page whose
 * start is this struct, updated by the device as jobs complete — poll it with
 * acquire loads and no system calls. */
struct fakegpu_fence_page {
	__u64 completed_seq;
	__u64 submitted_seq;
};
#define FAKEGPU_FENCE_PAGE_SIZE 4096u

#define FAKEGPU_IOC_INFO   _IOR(FAKEGPU_IOC_MAGIC, 0, struct fakegpu_info)    /* 0x80604600 */
#define FAKEGPU_IOC_ALLOC  _IOWR(FAKEGPU_IOC_MAGIC, 1, struct fakegpu_alloc)  /* 0xc0104601 */
#define FAKEGPU_IOC_FREE   _IOW(FAKEGPU_IOC_MAGIC, 2, struct fakegpu_free)    /* 0x40084602 */
#define FAKEGPU_IOC_SUBMIT _IOWR(FAKEGPU_IOC_MAGIC, 3, struct fakegpu_submit) /* 0xc0104603 */
#define FAKEGPU_IOC_WAIT   _IOW(FAKEGPU_IOC_MAGIC, 4, struct fakegpu_wait)    /* 0x40104604 */

#ifdef __cplusplus
#define FAKEGPU_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define FAKEGPU_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_info) == 96, "fakegpu_info is 96 bytes");
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_alloc) == 16, "fakegpu_alloc is 16 bytes");
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_free) == 8, "fakegpu_free is 8 bytes");
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_submit) == 16, "fakegpu_submit is 16 bytes");
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_wait) == 16, "fakegpu_wait is 16 bytes");
FAKEGPU_STATIC_ASSERT(sizeof(struct fakegpu_fence_page) == 16, "fakegpu_fence_page is 16 bytes");

#endif /* FAKEGPU_IOCTL_H */
