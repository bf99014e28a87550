// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fakegpu.ko — a GPU-shaped misc device, /dev/fakegpu (mode 0666).
 *
 * The device semantics (contexts, handles, quotas, seqnos, completion) live in
 * fakegpu_core.c, shared with the FUSE daemon; this file is the kernel glue:
 *   open     a context per open file (file->private_data) with its own mutex,
 *            wait queue, completion timer and fence page
 *   release  stop the timer, return every buffer to the pool
 *   ioctl    copy_from_user -> validate (core) -> act (core) -> copy_to_user
 *   mmap     the read-only fence page: completed_seq, pollable with no syscall
 * plus /sys/class/misc/fakegpu/stats, module parameters, and a leak check at
 * unload (pitfall_leak=1 reproduces the curriculum's pitfall 3 on purpose).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "fakegpu_core.h"

static unsigned int mem_total_mb = FG_DEFAULT_MEM_TOTAL_MB;
module_param(mem_total_mb, uint, 0444);
MODULE_PARM_DESC(mem_total_mb, "device memory pool in MiB (ENOMEM when all fds together exceed it)");
static unsigned int ctx_quota_mb = FG_DEFAULT_CTX_QUOTA_MB;
module_param(ctx_quota_mb, uint, 0444);
MODULE_PARM_DESC(ctx_quota_mb, "per-open-file quota in MiB (ENOSPC beyond it)");
static unsigned int max_handles = FG_DEFAULT_MAX_HANDLES;
module_param(max_handles, uint, 0444);
MODULE_PARM_DESC(max_handles, "buffers per open file");
static bool pitfall_leak;
module_param(pitfall_leak, bool, 0444);
MODULE_PARM_DESC(pitfall_leak, "reproduce pitfall 3: release forgets to free the context (unload reports it)");

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define fg_timer_delete_sync timer_delete_sync
#else
#define fg_timer_delete_sync del_timer_sync
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define fg_timer_owner timer_container_of
#else
#define fg_timer_owner from_timer
#endif

/* One per open file: everything the device knows about this fd. */
struct fg_file {
	struct fg_context *ctx;
	struct mutex lock;          /* guards ctx and the timer's arming */
	wait_queue_head_t wq;       /* WAIT sleeps here */
	struct timer_list timer;    /* fires at the oldest unfinished job's deadline */
	struct work_struct work;    /* the timer's completion work (needs the mutex) */
	struct fakegpu_fence_page *fence; /* a zeroed page, mapped read-only by mmap */
	bool dying;
	struct list_head node;      /* on fg_files: what unload checks for leaks */
};

static DEFINE_MUTEX(fg_dev_lock);   /* the pool and statistics (fakegpu_core's device lock) */
static DEFINE_MUTEX(fg_files_lock); /* fg_files */
static LIST_HEAD(fg_files);
static struct fg_device fg_dev;

static void *fg_kzalloc(size_t n) { return kvzalloc(n, GFP_KERNEL); }
static void fg_kfree(void *p) { kvfree(p); }
static void fg_lock(void *cookie) { mutex_lock(&fg_dev_lock); }
static void fg_unlock(void *cookie) { mutex_unlock(&fg_dev_lock); }

static const struct fg_ops fg_kernel_ops = {
	.zalloc = fg_kzalloc,
	.free = fg_kfree,
	.dev_lock = fg_lock,
	.dev_unlock = fg_unlock,
};

/* Called with f->lock held: publish the fence, arm the timer for the next job. */
static void fg_publish(struct fg_file *f)
{
	u64 deadline, now;

	smp_store_release(&f->fence->submitted_seq, f->ctx->submitted_seq);
	smp_store_release(&f->fence->completed_seq, f->ctx->completed_seq);
	if (f->dying || !fg_next_deadline(f->ctx, &deadline))
		return;
	now = ktime_get_ns();
	/* +1: a timer fires at a jiffy boundary, never before its deadline */
	mod_timer(&f->timer, jiffies + nsecs_to_jiffies(deadline > now ? deadline - now : 0) + 1);
}

static void fg_complete_work(struct work_struct *work)
{
	struct fg_file *f = container_of(work, struct fg_file, work);

	mutex_lock(&f->lock);
	fg_complete_due(f->ctx, ktime_get_ns());
	fg_publish(f);
	mutex_unlock(&f->lock);
	wake_up_interruptible_all(&f->wq);
}

static void fg_timer_fn(struct timer_list *t)
{
	struct fg_file *f = fg_timer_owner(f, t, timer);

	schedule_work(&f->work); /* softirq context: the mutex is taken in the work */
}

static int fakegpu_open(struct inode *inode, struct file *file)
{
	struct fg_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	f->fence = (struct fakegpu_fence_page *)get_zeroed_page(GFP_KERNEL);
	f->ctx = fg_context_create(&fg_dev);
	if (!f->fence || !f->ctx) {
		fg_context_destroy(f->ctx);
		free_page((unsigned long)f->fence);
		kfree(f);
		return -ENOMEM;
	}
	mutex_init(&f->lock);
	init_waitqueue_head(&f->wq);
	timer_setup(&f->timer, fg_timer_fn, 0);
	INIT_WORK(&f->work, fg_complete_work);
	mutex_lock(&fg_files_lock);
	list_add(&f->node, &fg_files);
	mutex_unlock(&fg_files_lock);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static void fg_file_free(struct fg_file *f)
{
	fg_context_destroy(f->ctx);
	free_page((unsigned long)f->fence);
	kfree(f);
}

static int fakegpu_release(struct inode *inode, struct file *file)
{
	struct fg_file *f = file->private_data;

	mutex_lock(&f->lock);
	f->dying = true; /* the work no longer re-arms the timer */
	mutex_unlock(&f->lock);
	fg_timer_delete_sync(&f->timer);
	cancel_work_sync(&f->work);
	fg_timer_delete_sync(&f->timer);
	if (pitfall_leak)
		return 0; /* the bug on purpose: the context stays on fg_files */
	mutex_lock(&fg_files_lock);
	list_del(&f->node);
	mutex_unlock(&fg_files_lock);
	fg_file_free(f);
	return 0;
}

union fg_arg {
	struct fakegpu_info info;
	struct fakegpu_alloc alloc;
	struct fakegpu_free free;
	struct fakegpu_submit submit;
	struct fakegpu_wait wait;
};

static long fg_wait_blocking(struct fg_file *f, const struct fg_wait_req *w)
{
	long left = w->timeout_ms ? (long)msecs_to_jiffies(w->timeout_ms) : MAX_SCHEDULE_TIMEOUT;

	left = wait_event_interruptible_timeout(
		f->wq, smp_load_acquire(&f->fence->completed_seq) >= w->seqno, left);
	if (left < 0)
		return left; /* -ERESTARTSYS: EINTR, or restarted by SA_RESTART */
	return left == 0 ? -ETIMEDOUT : 0;
}

static long fakegpu_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct fg_file *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct fg_wait_req w;
	union fg_arg buf;
	long size, rc;

	/* 1. decode: our five numbers only, each with its one direction and size */
	size = fg_cmd_size(cmd);
	if (size < 0)
		return -ENOTTY;
	/* 2. copy in: never touch uarg directly */
	memset(&buf, 0, sizeof(buf));
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(&buf, uarg, size))
		return -EFAULT;
	/* 3. validate and act, under this fd's mutex */
	mutex_lock(&f->lock);
	rc = fg_dispatch(f->ctx, cmd, &buf, ktime_get_ns(), &w);
	if (cmd == FAKEGPU_IOC_INFO && rc == 0)
		buf.info.flags |= FAKEGPU_INFO_F_FENCE_MMAP;
	fg_publish(f);
	mutex_unlock(&f->lock);
	if (rc == FG_WAIT_BLOCK)
		rc = fg_wait_blocking(f, &w);
	if (rc)
		return rc;
	/* 4. copy out; an ALLOC whose handle cannot be returned is undone */
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(uarg, &buf, size)) {
		if (cmd == FAKEGPU_IOC_ALLOC) {
			struct fakegpu_free undo = { .handle = buf.alloc.handle };

			mutex_lock(&f->lock);
			fg_dispatch(f->ctx, FAKEGPU_IOC_FREE, &undo, ktime_get_ns(), &w);
			mutex_unlock(&f->lock);
		}
		return -EFAULT;
	}
	return 0;
}

static int fakegpu_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fg_file *f = file->private_data;

	if (vma->vm_pgoff != 0 || vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, VM_MAYWRITE | VM_MAYEXEC);
#else
	vma->vm_flags &= ~(VM_MAYWRITE | VM_MAYEXEC);
#endif
	return vm_insert_page(vma, vma->vm_start, virt_to_page(f->fence));
}

static const struct file_operations fakegpu_fops = {
	.owner = THIS_MODULE,
	.open = fakegpu_open,
	.release = fakegpu_release,
	.unlocked_ioctl = fakegpu_ioctl,
	.mmap = fakegpu_mmap,
	.llseek = no_llseek,
};

static ssize_t stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct fg_stats s;

	fg_device_stats(&fg_dev, &s);
	return fg_format_stats(&s, buf, PAGE_SIZE);
}
static DEVICE_ATTR_RO(stats);

static struct attribute *fakegpu_attrs[] = { &dev_attr_stats.attr, NULL };
ATTRIBUTE_GROUPS(fakegpu);

static struct miscdevice fakegpu_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = FAKEGPU_DEVICE_NAME,
	.fops = &fakegpu_fops,
	.mode = 0666,
	.groups = fakegpu_groups,
};

static int __init fakegpu_init(void)
{
	struct fg_config cfg = {
		.mem_total = (u64)mem_total_mb << 20,
		.ctx_quota = (u64)ctx_quota_mb << 20,
		.max_handles = max_handles,
	};
	int err;

	BUILD_BUG_ON(sizeof(struct fakegpu_info) != 96);
	BUILD_BUG_ON(sizeof(struct fakegpu_alloc) != 16);
	BUILD_BUG_ON(sizeof(struct fakegpu_free) != 8);
	BUILD_BUG_ON(sizeof(struct fakegpu_submit) != 16);
	BUILD_BUG_ON(sizeof(struct fakegpu_wait) != 16);
	BUILD_BUG_ON(FAKEGPU_FENCE_PAGE_SIZE != PAGE_SIZE);
	if (fg_config_check(&cfg)) {
		pr_err("bad parameters: need 0 < ctx_quota_mb <= mem_total_mb and 1..%u handles\n",
		       FG_MAX_HANDLES_LIMIT);
		return -EINVAL;
	}
	fg_device_init(&fg_dev, &cfg, &fg_kernel_ops);
	err = misc_register(&fakegpu_misc);
	if (err)
		return err;
	pr_info("loaded, /dev/fakegpu ready (minor %d, pool %u MiB, quota %u MiB, %u handles)\n",
		fakegpu_misc.minor, mem_total_mb, ctx_quota_mb, max_handles);
	return 0;
}

static void __exit fakegpu_exit(void)
{
	struct fg_file *f, *tmp;
	struct fg_stats s;
	unsigned int leaked = 0;

	misc_deregister(&fakegpu_misc);
	fg_device_stats(&fg_dev, &s);
	list_for_each_entry_safe(f, tmp, &fg_files, node) {
		list_del(&f->node);
		fg_file_free(f);
		leaked++;
	}
	if (leaked || s.contexts || s.buffers)
		pr_warn("leak: %u contexts, %llu buffers, %llu bytes were never released (freed now)\n",
			leaked, s.buffers, s.bytes_in_use);
	pr_info("unloaded: %llu submits, %llu completed, %llu quota and %llu pool rejections\n",
		s.submits, s.completed, s.quota_rejections, s.pool_rejections);
}

module_init(fakegpu_init);
module_exit(fakegpu_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_AUTHOR("gpulab");
MODULE_DESCRIPTION("fakegpu: a GPU-shaped misc device (contexts, handles, quotas, fences)");
