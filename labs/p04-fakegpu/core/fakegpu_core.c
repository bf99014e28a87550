/* SPDX-License-Identifier: MIT */
/* fakegpu_core.c — see fakegpu_core.h. Pure C: no libc, no kernel headers beyond types. */
#include "fakegpu_core.h"

#ifdef __KERNEL__
#include <linux/kernel.h>
#else
#include <stdio.h>
#endif

static void dev_lock(struct fg_device *dev)
{
	if (dev->ops->dev_lock)
		dev->ops->dev_lock(dev->ops->cookie);
}

static void dev_unlock(struct fg_device *dev)
{
	if (dev->ops->dev_unlock)
		dev->ops->dev_unlock(dev->ops->cookie);
}

int fg_config_check(const struct fg_config *cfg)
{
	if (cfg->mem_total == 0 || cfg->ctx_quota == 0 || cfg->ctx_quota > cfg->mem_total)
		return -EINVAL;
	if (cfg->max_handles == 0 || cfg->max_handles > FG_MAX_HANDLES_LIMIT)
		return -EINVAL;
	return 0;
}

void fg_device_init(struct fg_device *dev, const struct fg_config *cfg, const struct fg_ops *ops)
{
	struct fg_stats zero = {0};

	dev->cfg = *cfg;
	dev->ops = ops;
	dev->next_handle = 1;
	dev->pad = 0;
	dev->stats = zero;
}

void fg_device_stats(struct fg_device *dev, struct fg_stats *out)
{
	dev_lock(dev);
	*out = dev->stats;
	dev_unlock(dev);
}

struct fg_context *fg_context_create(struct fg_device *dev)
{
	struct fg_context *ctx = (struct fg_context *)dev->ops->zalloc(sizeof(*ctx));

	if (!ctx)
		return NULL;
	ctx->dev = dev;
	ctx->bufs = (struct fg_buffer *)dev->ops->zalloc(sizeof(struct fg_buffer) * dev->cfg.max_handles);
	ctx->deadline = (__u64 *)dev->ops->zalloc(sizeof(__u64) * FAKEGPU_MAX_INFLIGHT);
	if (!ctx->bufs || !ctx->deadline) {
		dev->ops->free(ctx->bufs);
		dev->ops->free(ctx->deadline);
		dev->ops->free(ctx);
		return NULL;
	}
	dev_lock(dev);
	dev->stats.contexts++;
	dev_unlock(dev);
	return ctx;
}

void fg_context_destroy(struct fg_context *ctx)
{
	struct fg_device *dev;

	if (!ctx)
		return;
	dev = ctx->dev;
	dev_lock(dev);
	dev->stats.contexts--;
	dev->stats.buffers -= ctx->live;
	dev->stats.bytes_in_use -= ctx->used;
	dev_unlock(dev);
	dev->ops->free(ctx->deadline);
	dev->ops->free(ctx->bufs);
	dev->ops->free(ctx);
}

long fg_cmd_size(unsigned int cmd)
{
	switch (cmd) {
	case FAKEGPU_IOC_INFO:
		return (long)sizeof(struct fakegpu_info);
	case FAKEGPU_IOC_ALLOC:
		return (long)sizeof(struct fakegpu_alloc);
	case FAKEGPU_IOC_FREE:
		return (long)sizeof(struct fakegpu_free);
	case FAKEGPU_IOC_SUBMIT:
		return (long)sizeof(struct fakegpu_submit);
	case FAKEGPU_IOC_WAIT:
		return (long)sizeof(struct fakegpu_wait);
	default:
		return -ENOTTY;
	}
}

__u32 fg_complete_due(struct fg_context *ctx, __u64 now_ns)
{
	__u32 n = 0;

	while (ctx->completed_seq < ctx->submitted_seq &&
	       ctx->deadline[(ctx->completed_seq + 1) % FAKEGPU_MAX_INFLIGHT] <= now_ns) {
		ctx->completed_seq++;
		n++;
	}
	if (n) {
		dev_lock(ctx->dev);
		ctx->dev->stats.completed += n;
		dev_unlock(ctx->dev);
	}
	return n;
}

int fg_next_deadline(const struct fg_context *ctx, __u64 *deadline_ns)
{
	if (ctx->completed_seq >= ctx->submitted_seq)
		return 0;
	*deadline_ns = ctx->deadline[(ctx->completed_seq + 1) % FAKEGPU_MAX_INFLIGHT];
	return 1;
}

int fg_wait_done(const struct fg_context *ctx, __u64 seqno)
{
	return ctx->completed_seq >= seqno;
}

static struct fg_buffer *find_buffer(struct fg_context *ctx, __u32 handle)
{
	__u32 i;

	if (handle == 0)
		return NULL;
	for (i = 0; i < ctx->dev->cfg.max_handles; i++)
		if (ctx->bufs[i].handle == handle)
			return &ctx->bufs[i];
	return NULL;
}

static void count_invalid(struct fg_device *dev)
{
	dev_lock(dev);
	dev->stats.invalid_requests++;
	dev_unlock(dev);
}

static long do_info(struct fg_context *ctx, struct fakegpu_info *info)
{
	struct fg_device *dev = ctx->dev;
	struct fakegpu_info zero = {0};

	*info = zero; /* padding and reserved fields go back as zero */
	info->abi_version = FAKEGPU_ABI_VERSION;
	info->mem_total = dev->cfg.mem_total;
	info->ctx_quota = dev->cfg.ctx_quota;
	info->ctx_used = ctx->used;
	info->submitted_seq = ctx->submitted_seq;
	info->completed_seq = ctx->completed_seq;
	info->max_handles = dev->cfg.max_handles;
	info->ctx_buffers = ctx->live;
	dev_lock(dev);
	info->dev_mem_used = dev->stats.bytes_in_use;
	info->dev_contexts = (__u32)dev->stats.contexts;
	info->dev_buffers = (__u32)dev->stats.buffers;
	dev_unlock(dev);
	return 0;
}

static long do_alloc(struct fg_context *ctx, struct fakegpu_alloc *req)
{
	struct fg_device *dev = ctx->dev;
	struct fg_buffer *slot = NULL;
	long err = 0;
	__u32 i;

	/* validate: every field, against the device and this context */
	if (req->flags != 0)
		goto invalid;
	if (req->size == 0 || req->size > dev->cfg.mem_total)
		goto invalid;
	if (req->size > dev->cfg.ctx_quota - ctx->used) /* used <= quota: no wrap */
		goto quota;
	for (i = 0; i < dev->cfg.max_handles && !slot; i++)
		if (ctx->bufs[i].handle == 0)
			slot = &ctx->bufs[i];
	if (!slot)
		goto quota;

	/* act: take bytes from the pool and a never-used handle */
	dev_lock(dev);
	if (req->size > dev->cfg.mem_total - dev->stats.bytes_in_use || dev->next_handle == 0) {
		dev->stats.pool_rejections++;
		err = -ENOMEM;
	} else {
		slot->handle = dev->next_handle++;
		dev->stats.bytes_in_use += req->size;
		dev->stats.buffers++;
		dev->stats.allocs++;
	}
	dev_unlock(dev);
	if (err)
		return err;
	slot->size = req->size;
	slot->last_seq = 0;
	ctx->used += req->size;
	ctx->live++;
	req->handle = slot->handle;
	return 0;

invalid:
	count_invalid(dev);
	return -EINVAL;
quota:
	dev_lock(dev);
	dev->stats.quota_rejections++;
	dev_unlock(dev);
	return -ENOSPC;
}

static long do_free(struct fg_context *ctx, const struct fakegpu_free *req)
{
	struct fg_device *dev = ctx->dev;
	struct fg_buffer *buf;

	if (req->flags != 0)
		goto invalid;
	buf = find_buffer(ctx, req->handle);
	if (!buf)
		goto invalid;
	if (buf->last_seq > ctx->completed_seq)
		return -EBUSY;

	dev_lock(dev);
	dev->stats.bytes_in_use -= buf->size;
	dev->stats.buffers--;
	dev->stats.frees++;
	dev_unlock(dev);
	ctx->used -= buf->size;
	ctx->live--;
	buf->handle = 0;
	buf->size = 0;
	buf->last_seq = 0;
	return 0;

invalid:
	count_invalid(dev);
	return -EINVAL;
}

static long do_submit(struct fg_context *ctx, struct fakegpu_submit *req, __u64 now_ns)
{
	struct fg_buffer *buf;
	__u64 seq;

	if (req->flags != 0)
		goto invalid;
	buf = find_buffer(ctx, req->handle);
	if (!buf)
		goto invalid;
	if (ctx->submitted_seq - ctx->completed_seq >= FAKEGPU_MAX_INFLIGHT)
		return -EAGAIN;

	seq = ++ctx->submitted_seq;
	ctx->deadline[seq % FAKEGPU_MAX_INFLIGHT] = now_ns + FAKEGPU_JOB_LATENCY_NS;
	buf->last_seq = seq;
	req->seqno = seq;
	dev_lock(ctx->dev);
	ctx->dev->stats.submits++;
	dev_unlock(ctx->dev);
	return 0;

invalid:
	count_invalid(ctx->dev);
	return -EINVAL;
}

static long do_wait(struct fg_context *ctx, const struct fakegpu_wait *req, struct fg_wait_req *wait)
{
	if (req->flags != 0 || req->seqno > ctx->submitted_seq) {
		count_invalid(ctx->dev);
		return -EINVAL;
	}
	if (fg_wait_done(ctx, req->seqno))
		return 0;
	wait->seqno = req->seqno;
	wait->timeout_ms = req->timeout_ms;
	wait->pad = 0;
	return FG_WAIT_BLOCK;
}

long fg_dispatch(struct fg_context *ctx, unsigned int cmd, void *buf, __u64 now_ns,
		 struct fg_wait_req *wait)
{
	fg_complete_due(ctx, now_ns);
	switch (cmd) {
	case FAKEGPU_IOC_INFO:
		return do_info(ctx, (struct fakegpu_info *)buf);
	case FAKEGPU_IOC_ALLOC:
		return do_alloc(ctx, (struct fakegpu_alloc *)buf);
	case FAKEGPU_IOC_FREE:
		return do_free(ctx, (const struct fakegpu_free *)buf);
	case FAKEGPU_IOC_SUBMIT:
		return do_submit(ctx, (struct fakegpu_submit *)buf, now_ns);
	case FAKEGPU_IOC_WAIT:
		return do_wait(ctx, (const struct fakegpu_wait *)buf, wait);
	default:
		count_invalid(ctx->dev);
		return -ENOTTY;
	}
}

int fg_format_stats(const struct fg_stats *s, char *buf, size_t len)
{
	return snprintf(buf, len,
			"contexts %llu\nbuffers %llu\nbytes_in_use %llu\nsubmits %llu\ncompleted %llu\n"
			"allocs %llu\nfrees %llu\nquota_rejections %llu\npool_rejections %llu\n"
			"invalid_requests %llu\n",
			(unsigned long long)s->contexts, (unsigned long long)s->buffers,
			(unsigned long long)s->bytes_in_use, (unsigned long long)s->submits,
			(unsigned long long)s->completed, (unsigned long long)s->allocs,
			(unsigned long long)s->frees, (unsigned long long)s->quota_rejections,
			(unsigned long long)s->pool_rejections, (unsigned long long)s->invalid_requests);
}
