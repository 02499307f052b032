/*
 * System calls the application adds to Kore's worker seccomp filter
 * (Kore looks up kore_seccomp_hook() at start-up; one per binary, so
 * other concerns add their calls here too).
 *
 * getdents64: the TPP trust store re-reads psd2_crl_dir when its files
 * change (scandir() in src/tpp/trust.c).
 */
#include <sys/types.h>

#include <kore.h>
#include <seccomp.h>

void	kore_seccomp_hook(void);

static struct sock_filter	app_seccomp_filter[] = {
#if defined(SYS_getdents64)
	KORE_SYSCALL_ALLOW(getdents64),
#endif
#if defined(SYS_getdents)
	KORE_SYSCALL_ALLOW(getdents),
#endif
};

void
kore_seccomp_hook(void)
{
	kore_seccomp_filter("psd2gate", app_seccomp_filter,
	    KORE_FILTER_LEN(app_seccomp_filter));
}
