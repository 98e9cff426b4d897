/*
 * bench/footprint.c: what using lfpoll costs besides time.
 *
 * footprint/callsite-<call>   the bytes of a one-line wrapper around the
 *        call (bench/wrappers.c) compiled with -O2 by gcc and by clang, from
 *        nm -S, with its call targets from objdump -dr and whether any of
 *        them is a system call or a pthread function (inlined into the call
 *        site: the code of its out-of-line .cold part counts as inlined,
 *        the lfpoll functions it calls do not).  Target: at most 256 bytes
 *        and no system call or pthread call, for eq_write, cq_write(1) and
 *        cq_read(32).
 * footprint/idle-<object>     resident memory added per idle object of the
 *        default size (EQ, CQ, counter, wait set): IDLE_OBJECTS opened,
 *        /proc/self/statm read before and after, the difference divided by
 *        their number.  Kernel memory (an eventfd, an epoll instance) is not
 *        resident memory of the process and is not counted.  Target: an
 *        idle CQ at most 8 KB.
 *
 * The object files come from the build (WRAPPERS_GCC, WRAPPERS_CLANG); a
 * compiler or tool that is missing makes its rows say why they are skipped.
 * Nothing here is timed: these rows have no rounds and no ratio.
 */
#define _GNU_SOURCE
#include <lfpoll/lfpoll.h>

#include "harness.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef WRAPPERS_GCC
#  define WRAPPERS_GCC ""
#endif
#ifndef WRAPPERS_CLANG
#  define WRAPPERS_CLANG ""
#endif

#define IDLE_OBJECTS  4096
#define CALLSITE_MAX  256       /* bytes: the call-site target */
#define IDLE_CQ_MAX   8192      /* bytes: the idle CQ target */
#define MAXSYM        256
#define MAXCALL       24
#define NAME_LEN      256

/* ------------------------------------------------------------ call sites */

struct sym {
	char name[NAME_LEN];
	char sect[64];
	unsigned long addr, size;
	int ncall;
	char call[MAXCALL][NAME_LEN];
};

static struct sym syms[MAXSYM];
static int nsym;

static struct sym *sym_named(const char *name)
{
	int i;

	for (i = 0; i < nsym; i++)
		if (!strcmp(syms[i].name, name))
			return &syms[i];
	return NULL;
}

/* The function of section sect that holds address a. */
static struct sym *sym_at(const char *sect, unsigned long a)
{
	int i;

	for (i = 0; i < nsym; i++)
		if (!strcmp(syms[i].sect, sect) && a >= syms[i].addr &&
		    a < syms[i].addr + (syms[i].size ? syms[i].size : 1))
			return &syms[i];
	return NULL;
}

/* objdump -t: every function symbol, its section, address and size. */
static int read_symbols(const char *obj, char *why, size_t len)
{
	char cmd[512], line[512], flags[16], sect[64], name[256];
	unsigned long addr, size;
	FILE *p;

	nsym = 0;
	snprintf(cmd, sizeof(cmd), "objdump -t '%s' 2>/dev/null", obj);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(why, len, "cannot run objdump");
		return -1;
	}
	while (fgets(line, sizeof(line), p) && nsym < MAXSYM) {
		/* "00000000000000e0 g     F .text	0000000000000201 cs_eq_write" */
		char *f = strstr(line, " F ");

		if (!f || sscanf(line, "%lx", &addr) != 1 ||
		    sscanf(f, " %15s %63s %lx %255s", flags, sect, &size,
		           name) != 4)
			continue;
		snprintf(syms[nsym].name, NAME_LEN, "%s", name);
		snprintf(syms[nsym].sect, sizeof(syms[nsym].sect), "%s", sect);
		syms[nsym].addr = addr;
		syms[nsym].size = size;
		syms[nsym].ncall = 0;
		nsym++;
	}
	if (pclose(p) != 0 || !nsym) {
		snprintf(why, len, "objdump -t %s found no functions "
		         "(binutils missing?)", obj);
		return -1;
	}
	return 0;
}

static void add_call(struct sym *s, const char *target)
{
	int i;

	if (!s || !strcmp(s->name, target))
		return;
	for (i = 0; i < s->ncall; i++)
		if (!strcmp(s->call[i], target))
			return;
	if (s->ncall < MAXCALL)
		snprintf(s->call[s->ncall++], NAME_LEN, "%s", target);
}

/* The target of a relocation "sym-0x4" or "section+0x1c": a symbol name,
 * or the function at that place of that section. */
static void reloc_target(const char *r, char *out, size_t len)
{
	char base[NAME_LEN];
	const char *op = strpbrk(r, "+-");
	long add = 0;
	struct sym *s;

	snprintf(base, sizeof(base), "%.*s", op ? (int)(op - r) : (int)strlen(r),
	         r);
	if (op)
		add = strtol(op, NULL, 16);
	if (base[0] == '.') {
		/* PC-relative: the place is the addend plus the 4 bytes of
		 * the displacement itself. */
		s = sym_at(base, (unsigned long)(add + 4));
		snprintf(out, len, "%s", s ? s->name : base);
		return;
	}
	snprintf(out, len, "%s", base);
}

/* objdump -dr: every call and jump out of each function. */
static int read_calls(const char *obj, char *why, size_t len)
{
	char cmd[512], line[512], name[256], tgt[NAME_LEN], sect[64] = "";
	char label[NAME_LEN] = "";
	struct sym *cur = NULL;
	int pending = 0;
	char *r, *lt;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "objdump -dr --no-show-raw-insn '%s' "
	         "2>/dev/null", obj);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(why, len, "cannot run objdump");
		return -1;
	}
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		r = strstr(line, "R_X86_64_");
		if (!r)
			r = strstr(line, "R_AARCH64_");
		if (r && pending) {
			/* A relocated call or jump: the relocation names the
			 * target; the instruction's label is a placeholder. */
			r = strchr(r, '\t') ? strchr(r, '\t') + 1 : strchr(r, ' ');
			while (r && *r == ' ')
				r++;
			if (r) {
				reloc_target(r, tgt, sizeof(tgt));
				add_call(cur, tgt);
			}
			pending = 0;
			continue;
		}
		/* Not relocated: the instruction's label is the target, a
		 * function of this section (its own label: a local jump). */
		if (pending && sym_named(label) && cur &&
		    strcmp(label, cur->name) != 0)
			add_call(cur, label);
		pending = 0;
		if (sscanf(line, "Disassembly of section %63[^:]:", sect) == 1)
			continue;
		if (sscanf(line, "%*x <%255[^>]>:", name) == 1) {
			cur = sym_named(name);
			continue;
		}
		if (!strstr(line, "\tcall") && !strstr(line, "\tjmp") &&
		    !strstr(line, "\tbl") && !strstr(line, "\tb\t"))
			continue;
		pending = 1;
		label[0] = '\0';
		lt = strchr(line, '<');
		if (lt)
			sscanf(lt, "<%255[^+>]", label);
	}
	if (pending && sym_named(label) && cur && strcmp(label, cur->name))
		add_call(cur, label);
	pclose(p);
	(void)why;
	(void)len;
	return 0;
}

/* A system call or a pthread function, by name. */
static int is_sys(const char *n)
{
	static const char *const pre[] = {
		"pthread_", "sem_", "epoll_", "eventfd", "syscall", "futex",
		"__libc_", "sched_yield", "nanosleep", "clock_nanosleep",
		"usleep", "ioctl", "ppoll", "pselect",
	};
	static const char *const exact[] = {
		"write", "read", "writev", "readv", "poll", "select", "close",
		"open", "pipe", "pipe2", "fcntl",
	};
	size_t i;

	for (i = 0; i < BENCH_LEN(pre); i++)
		if (!strncmp(n, pre[i], strlen(pre[i])))
			return 1;
	for (i = 0; i < BENCH_LEN(exact); i++)
		if (!strcmp(n, exact[i]))
			return 1;
	return 0;
}

struct wrapper {
	const char *fn;         /* in bench/wrappers.c */
	const char *call;       /* the case name's part */
	const char *what;
	int target;             /* the call-site target applies */
};

static const struct wrapper wrappers[] = {
	{ "cs_eq_write", "eq_write", "lfp_eq_write(eq, LFP_NOTIFY, e, 24, 0)", 1 },
	{ "cs_eq_read", "eq_read", "lfp_eq_read(eq, &ev, e, 24, 0)", 0 },
	{ "cs_eq_write_spsc", "eq_write_spsc",
	  "lfp_eq_write_spsc(eq, LFP_NOTIFY, e, 24, 0)", 0 },
	{ "cs_eq_read_spsc", "eq_read_spsc", "lfp_eq_read_spsc(eq, &ev, e, 24, 0)", 0 },
	{ "cs_cq_write1", "cq_write1", "lfp_cq_write(cq, e, 1)", 1 },
	{ "cs_cq_read32", "cq_read32", "lfp_cq_read(cq, buf, 32)", 1 },
	{ "cs_cq_write1_spsc", "cq_write1_spsc", "lfp_cq_write_spsc(cq, e, 1)", 0 },
	{ "cs_cq_read1_spsc", "cq_read1_spsc", "lfp_cq_read_spsc(cq, buf, 1)", 0 },
	{ "cs_ring_enqueue", "ring_enqueue", "lfp_ring_enqueue(r, e, 64)", 0 },
	{ "cs_ring_dequeue", "ring_dequeue", "lfp_ring_dequeue(r, e, 64)", 0 },
};

static const struct { const char *impl, *obj; } compilers[] = {
	{ "gcc -O2", WRAPPERS_GCC },
	{ "clang -O2", WRAPPERS_CLANG },
};
#define NCC BENCH_LEN(compilers)

static char notes[BENCH_LEN(wrappers)][NCC][640];

/* Fill m (one metric per compiler) for wrapper w. */
static void measure_wrapper(size_t wi, struct bench_metric *m,
                            const int *loaded, char why[][160])
{
	const struct wrapper *w = &wrappers[wi];
	char cold[NAME_LEN + 8];
	size_t ci;
	int i, k, sys;

	for (ci = 0; ci < NCC; ci++) {
		struct sym *s, *c;
		char *n = notes[wi][ci];
		size_t used;

		m[ci] = (struct bench_metric){ .impl = compilers[ci].impl,
		                               .value = NAN, .unit = "bytes",
		                               .note = why[ci] };
		if (!loaded[ci])
			continue;
		/* Each object's symbols and calls are re-read per wrapper:
		 * syms holds one object at a time. */
		if (read_symbols(compilers[ci].obj, why[ci], sizeof(why[ci])) ||
		    read_calls(compilers[ci].obj, why[ci], sizeof(why[ci])))
			continue;
		s = sym_named(w->fn);
		if (!s) {
			snprintf(why[ci], sizeof(why[ci]), "%s not in %s", w->fn,
			         compilers[ci].obj);
			continue;
		}
		snprintf(cold, sizeof(cold), "%s.cold", w->fn);
		c = sym_named(cold);
		sys = 0;
		used = (size_t)snprintf(n, sizeof(notes[0][0]), "%s", w->what);
		if (c)
			used += (size_t)snprintf(n + used, sizeof(notes[0][0]) - used,
			                         "; and %lu bytes in %s",
			                         c->size, cold);
		used += (size_t)snprintf(n + used, sizeof(notes[0][0]) - used,
		                         "; calls:");
		for (k = 0; k < 2; k++) {
			struct sym *x = k ? c : s;

			for (i = 0; x && i < x->ncall; i++) {
				if (!strcmp(x->call[i], cold) ||
				    !strcmp(x->call[i], w->fn))
					continue;
				sys |= is_sys(x->call[i]);
				if (used < sizeof(notes[0][0]))
					used += (size_t)snprintf(n + used,
						sizeof(notes[0][0]) - used,
						" %s%s", x->call[i],
						is_sys(x->call[i]) ? "(!)" : "");
			}
		}
		if (used < sizeof(notes[0][0]))
			snprintf(n + used, sizeof(notes[0][0]) - used, "%s",
			         sys ? "; a system call or pthread call inline (!)"
			             : "; no system call or pthread call inline");
		m[ci].value = (double)s->size;
		m[ci].max = w->target ? CALLSITE_MAX : 0;
		m[ci].cond = !sys;
		m[ci].note = n;
	}
}

static void run_callsites(void)
{
	char why[NCC][160], name[64], label[160];
	struct bench_metric m[NCC];
	int loaded[NCC];
	size_t ci, wi;

	for (ci = 0; ci < NCC; ci++) {
		loaded[ci] = compilers[ci].obj[0] &&
		             access(compilers[ci].obj, R_OK) == 0;
		snprintf(why[ci], sizeof(why[ci]), "%s",
		         compilers[ci].obj[0] ? "object file not built"
		                              : "compiler not found at build");
	}
	for (wi = 0; wi < BENCH_LEN(wrappers); wi++) {
		measure_wrapper(wi, m, loaded, why);
		snprintf(name, sizeof(name), "footprint/callsite-%s",
		         wrappers[wi].call);
		snprintf(label, sizeof(label), "bytes of a one-line wrapper of "
		         "%s at -O2 (nm -S), its calls (objdump -dr)",
		         wrappers[wi].what);
		bench_metric_case(name, label, m, NCC);
		/* A failed read leaves the reason for the next wrapper too. */
	}
}

/* ------------------------------------------------------------ idle RSS */

static long resident_pages(void)
{
	long size = -1, res = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res;
}

enum idle_kind { IDLE_EQ, IDLE_CQ, IDLE_CNTR, IDLE_WAIT };

static int idle_open(enum idle_kind k, void **o)
{
	switch (k) {
	case IDLE_EQ:
		return lfp_eq_open(NULL, (struct lfp_eq **)o, NULL);
	case IDLE_CQ:
		return lfp_cq_open(NULL, (struct lfp_cq **)o, NULL);
	case IDLE_CNTR:
		return lfp_cntr_open(NULL, (struct lfp_cntr **)o, NULL);
	case IDLE_WAIT:
		return lfp_wait_open(NULL, (struct lfp_wait **)o);
	}
	return -EINVAL;
}

static void idle_close(enum idle_kind k, void *o)
{
	switch (k) {
	case IDLE_EQ:
		lfp_eq_close(o);
		break;
	case IDLE_CQ:
		lfp_cq_close(o);
		break;
	case IDLE_CNTR:
		lfp_cntr_close(o);
		break;
	case IDLE_WAIT:
		lfp_wait_close(o);
		break;
	}
}

static void run_idle(void)
{
	static const struct {
		enum idle_kind k;
		const char *name, *what;
		int fds;        /* file descriptors each holds */
		double max;
	} kinds[] = {
		{ IDLE_EQ, "footprint/idle-eq", "EQ (attr NULL: 1024 events, "
		  "wait object NONE)", 0, 0 },
		{ IDLE_CQ, "footprint/idle-cq", "CQ (attr NULL: 1024 context "
		  "entries, wait object NONE)", 0, IDLE_CQ_MAX },
		{ IDLE_CNTR, "footprint/idle-cntr", "counter (attr NULL, wait "
		  "object NONE)", 0, 0 },
		{ IDLE_WAIT, "footprint/idle-wait", "wait set (attr NULL: FD, "
		  "an eventfd and an epoll instance)", 2, 0 },
	};
	static void *objs[IDLE_OBJECTS];
	static char notes_idle[BENCH_LEN(kinds)][160];
	long page = sysconf(_SC_PAGESIZE), before, after;
	struct rlimit rl;
	size_t i;
	int n, want, ret;

	/* Room for the wait sets' descriptors. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < BENCH_LEN(kinds); i++) {
		struct bench_metric m = { .impl = "lfpoll", .value = NAN,
		                          .unit = "bytes/object",
		                          .max = kinds[i].max, .cond = 1,
		                          .note = notes_idle[i] };
		char label[200];

		want = IDLE_OBJECTS;
		if (kinds[i].fds &&
		    (rlim_t)(want * kinds[i].fds + 64) > rl.rlim_cur)
			want = (int)((rl.rlim_cur - 64) / (rlim_t)kinds[i].fds);
		/* Freed memory of the kinds before must not be reused here
		 * without becoming resident again: give it back first. */
		malloc_trim(0);
		before = resident_pages();
		for (n = 0, ret = 0; n < want && !ret; n++)
			ret = idle_open(kinds[i].k, &objs[n]);
		if (ret)
			n--;
		after = resident_pages();
		while (n > 0)
			idle_close(kinds[i].k, objs[--n]);
		if (ret || before < 0 || after < 0) {
			snprintf(notes_idle[i], sizeof(notes_idle[i]),
			         ret ? "open failed: %s" : "no /proc/self/statm",
			         lfp_strerror(ret));
		} else {
			m.value = (double)(after - before) * (double)page / want;
			snprintf(notes_idle[i], sizeof(notes_idle[i]),
			         "%d objects opened, %ld pages became resident",
			         want, after - before);
		}
		snprintf(label, sizeof(label), "resident memory per idle %s, "
		         "from /proc/self/statm", kinds[i].what);
		bench_metric_case(kinds[i].name, label, &m, 1);
	}
}

int main(int argc, char **argv)
{
	bench_init("footprint", argc, argv);
	run_callsites();
	run_idle();
	return bench_finish();
}
