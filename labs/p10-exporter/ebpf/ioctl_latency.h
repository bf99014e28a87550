/* ioctl_latency.h — the maps' key and value layouts, shared by the BPF program
 * (ioctl_latency.bpf.c, through vmlinux.h) and user space (through linux/types.h).
 * Both sides must agree byte for byte: every field is a fixed-width __u32/__u64
 * and every struct is padded by hand. */
#ifndef GPULAB_IOCTL_LATENCY_H
#define GPULAB_IOCTL_LATENCY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Log2 latency buckets: slot k holds calls that took [2^k, 2^(k+1)) ns (slot 0 also
 * holds 0 and 1 ns); the last slot holds everything from 2^(kSlots-1) ns (~9 min) on. */
#define IOCTL_LATENCY_SLOTS 40

/* The files user space asked about (--device): at most this many. */
#define IOCTL_LATENCY_MAX_TARGETS 64
/* Distinct (target, request code) pairs kept; a new pair beyond it is counted as dropped. */
#define IOCTL_LATENCY_MAX_KEYS 4096
/* Threads inside an ioctl on a target at the same time. */
#define IOCTL_LATENCY_MAX_INFLIGHT 16384

/* A target is the file behind the fd. A character device is keyed by its device
 * number (any node for it, in any mount namespace, is the same driver); anything
 * else (fakegpud's FUSE file) by the filesystem's device number and the inode. The
 * device numbers are the kernel's encoding, major << 20 | minor. */
#define IOCTL_LATENCY_CHRDEV_INO 0xffffffffffffffffull
struct ioctl_target_key {
	__u64 dev; /* rdev of a character device, else the superblock's s_dev */
	__u64 ino; /* IOCTL_LATENCY_CHRDEV_INO for a character device, else the inode */
};

struct ioctl_hist_key {
	__u32 target; /* index of the --device the call was on */
	__u32 cmd;    /* the request code as the kernel saw it (32 bits) */
};

struct ioctl_hist {
	__u64 count;  /* calls that returned */
	__u64 errors; /* of them, calls that returned -1 (errno set) */
	__u64 sum_ns;
	__u64 slots[IOCTL_LATENCY_SLOTS];
};

/* Indexes of the `drops` array: events the program saw but could not keep. */
enum ioctl_latency_drop {
	IOCTL_DROP_INFLIGHT_FULL = 0, /* the in-flight map was full at sys_enter */
	IOCTL_DROP_KEYS_FULL = 1,     /* the histogram map was full at sys_exit */
	IOCTL_DROP_KINDS = 2,
};

#endif /* GPULAB_IOCTL_LATENCY_H */
