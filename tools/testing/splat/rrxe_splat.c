// SPDX-License-Identifier: GPL-2.0
/*
 * rrxe_splat: makes the kernel report one bug of the kind named by its
 * "kind" parameter, from its init function, so that the test harness can be
 * shown to fail a run on each kind of report it watches for
 * (scripts/harness-selftest.sh). make check never loads it.
 *
 * Every kind but "leak" fails the load (-EAGAIN) once it has made its
 * report, so nothing stays behind.
 */
#include <linux/array_size.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *kind = "none";
module_param(kind, charp, 0444);
MODULE_PARM_DESC(kind, "none, warn, kasan, leak, lockdep, atomic, hung or oops");

/* KASAN: a read of a freed object (slab-use-after-free). */
static noinline void splat_kasan(void)
{
	char *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("rrxe_splat: read after free: %d\n", READ_ONCE(p[8]));
}

/*
 * kmemleak: an object nothing points to once init returns. A large one: a
 * small one may stay referenced by a stale slot of the slab allocator's
 * per-CPU caches (measured: a 256-byte object was never reported).
 */
static noinline void splat_leak(void)
{
	char *p = kmalloc(SZ_64K, GFP_KERNEL);

	if (!p)
		return;
	memset(p, 0x5a, SZ_64K);
	OPTIMIZER_HIDE_VAR(p);
}

/* lockdep: A then B, later B then A (no deadlock, the inversion is enough). */
static noinline void splat_lockdep(void)
{
	static DEFINE_MUTEX(a);
	static DEFINE_MUTEX(b);

	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
}

/* DEBUG_ATOMIC_SLEEP: a sleep with preemption off. */
static noinline void splat_atomic(void)
{
	preempt_disable();
	msleep(1);
	preempt_enable();
}

/*
 * The hung-task detector: 30 s in D state. The caller lowers
 * hung_task_timeout_secs first (the test kernel boots with 120).
 */
static noinline void splat_hung(void)
{
	schedule_timeout_uninterruptible(30 * HZ);
}

/* An Oops: a write through a NULL pointer (kills the insmod process). */
static noinline void splat_oops(void)
{
	int *p = NULL;

	OPTIMIZER_HIDE_VAR(p);
	WRITE_ONCE(*p, 1);
}

static noinline void splat_warn(void)
{
	WARN(1, "rrxe_splat: a deliberate warning\n");
}

static const struct {
	const char *name;
	void (*splat)(void);
	/* The module stays loaded: its object must outlive init. */
	bool stays;
} kinds[] = {
	{ "none", NULL, false },
	{ "warn", splat_warn, false },
	{ "kasan", splat_kasan, false },
	{ "leak", splat_leak, true },
	{ "lockdep", splat_lockdep, false },
	{ "atomic", splat_atomic, false },
	{ "hung", splat_hung, false },
	{ "oops", splat_oops, false },
};

static int __init rrxe_splat_init(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (strcmp(kind, kinds[i].name))
			continue;
		if (kinds[i].splat)
			kinds[i].splat();
		return kinds[i].stays ? 0 : -EAGAIN;
	}
	return -EINVAL;
}

static void __exit rrxe_splat_exit(void)
{
}

module_init(rrxe_splat_init);
module_exit(rrxe_splat_exit);
MODULE_DESCRIPTION("rrxe test harness self-test: deliberate kernel reports");
MODULE_LICENSE("GPL");
