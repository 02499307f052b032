/*
 * psd2-emuhost: the emulator harness. It owns a umockdev testbed with
 * emulated authenticators, answers psd2-emu on a control socket, and can
 * run one command (psd2-deviced) inside the testbed as its child.
 *
 *	psd2-emuhost --state DIR --socket PATH --manufacturer-key PEM
 *	    [--vidpid VID:PID] [--verbose] SERIAL[,SERIAL...] [-- CMD ARGS...]
 *
 * Run it under the umockdev preload (device/README.md). Control lines:
 * "press|decline|unplug|plug|show|counter SERIAL", "pin SERIAL PIN",
 * "unlock SERIAL PUK NEWPIN", "setcounter SERIAL N", "fault SERIAL NAME",
 * "add SERIAL", "list"; each answered with one line starting "ok" or
 * "error".
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "firmware.h"
#include "usbemu.h"

#define HOST_MAX_DEVICES	256
#define HOST_LINE_MAX		256
#define HOST_KILL_WAIT_MS	5000

static struct {
	struct usbemu		*emu;
	struct fw		*fws[HOST_MAX_DEVICES];
	size_t			 nfws;
	struct fw_params	 params;
	pid_t			 child;
} H;

static void
usage(void)
{
	fprintf(stderr, "usage: psd2-emuhost --state DIR --socket PATH "
	    "--manufacturer-key PEM [--vidpid VID:PID] [--verbose] "
	    "SERIAL[,SERIAL...] [-- CMD ARGS...]\n");
	exit(2);
}

static struct fw *
host_find(const char *serial)
{
	size_t	i;

	for (i = 0; i < H.nfws; i++) {
		if (strcmp(fw_serial(H.fws[i]), serial) == 0)
			return (H.fws[i]);
	}
	return (NULL);
}

static int
host_add(const char *serial, char *err, size_t elen)
{
	struct fw	*fw;

	if (host_find(serial) != NULL) {
		snprintf(err, elen, "%s exists", serial);
		return (-1);
	}
	if (H.nfws == HOST_MAX_DEVICES) {
		snprintf(err, elen, "too many devices");
		return (-1);
	}
	H.params.serial = serial;
	if ((fw = fw_new(H.emu, &H.params, err, elen)) == NULL)
		return (-1);
	H.fws[H.nfws++] = fw;
	if (fw_plug(fw) != 0) {
		snprintf(err, elen, "plug failed");
		return (-1);
	}
	return (0);
}

static const char *
pin_answer(int rc, struct fw *fw, char *buf, size_t len)
{
	switch (rc) {
	case FW_PIN_OK:
		return ("ok PIN accepted");
	case FW_PIN_WRONG:
		snprintf(buf, len, "error wrong, %d tries left",
		    fw_pin_tries(fw));
		return (buf);
	case FW_PIN_LOCKED:
		return ("error PIN locked: staff reset needed (unlock)");
	case FW_PIN_DEAD:
		return ("error PUK tries used up: replace the device");
	case FW_PIN_FORMAT:
		return ("error PIN: 4 to 8 digits; PUK: 8 digits");
	default:
		return ("error nothing to enter it for");
	}
}

static void
host_secret(struct fw *fw, const char *verb, const char *arg,
    const char *arg2, char *out, size_t olen)
{
	char	buf[96];
	int	rc;

	if (arg == NULL || (verb[0] == 'u' && arg2 == NULL)) {
		snprintf(out, olen, "error usage");
		return;
	}
	rc = verb[0] == 'p' ? fw_pin(fw, arg) : fw_unlock(fw, arg, arg2);
	if (rc == FW_PIN_OK && verb[0] == 'u')
		snprintf(out, olen, "ok unlocked, new PIN set");
	else
		snprintf(out, olen, "%s", pin_answer(rc, fw, buf,
		    sizeof(buf)));
}

static void
host_command(char *line, char *out, size_t olen)
{
	char		*verb, *serial, *arg, *arg2, *end;
	unsigned long	 n;
	struct fw	*fw;
	enum fw_fault	 fault;
	char		 err[128];
	size_t		 i, o;
	int		 rc;

	verb = strtok(line, " \t\r\n");
	serial = strtok(NULL, " \t\r\n");
	arg = strtok(NULL, " \t\r\n");
	arg2 = strtok(NULL, " \t\r\n");
	if (verb != NULL && strcmp(verb, "list") == 0) {
		o = (size_t)snprintf(out, olen, "ok");
		for (i = 0; i < H.nfws && o < olen; i++)
			o += (size_t)snprintf(out + o, olen - o, " %s%s",
			    fw_serial(H.fws[i]), fw_plugged(H.fws[i]) ? "" :
			    "(unplugged)");
		return;
	}
	if (verb == NULL || serial == NULL) {
		snprintf(out, olen, "error usage");
		return;
	}
	if (strcmp(verb, "add") == 0) {
		if (host_add(serial, err, sizeof(err)) != 0)
			snprintf(out, olen, "error %s", err);
		else
			snprintf(out, olen, "ok added %s", serial);
		return;
	}
	if ((fw = host_find(serial)) == NULL) {
		snprintf(out, olen, "error no device %s", serial);
		return;
	}
	if (strcmp(verb, "press") == 0 || strcmp(verb, "decline") == 0) {
		rc = verb[0] == 'p' ? fw_press(fw) : fw_decline(fw);
		if (rc == -2)
			snprintf(out, olen, "error enter the PIN first "
			    "(psd2-emu pin %s PIN)", serial);
		else if (rc != 0)
			snprintf(out, olen, "error nothing to %s on %s", verb,
			    serial);
		else
			snprintf(out, olen, "ok %s", verb);
	} else if (strcmp(verb, "pin") == 0 || strcmp(verb, "unlock") == 0) {
		host_secret(fw, verb, arg, arg2, out, olen);
	} else if (strcmp(verb, "setcounter") == 0 && arg != NULL &&
	    arg[0] >= '0' && arg[0] <= '9' &&
	    (n = strtoul(arg, &end, 10)) <= UINT32_MAX && *end == '\0') {
		fw_set_counter(fw, (uint32_t)n);
		snprintf(out, olen, "ok counter %lu", n);
	} else if (strcmp(verb, "unplug") == 0) {
		fw_unplug(fw);
		snprintf(out, olen, "ok unplugged");
	} else if (strcmp(verb, "plug") == 0) {
		if (fw_plug(fw) != 0)
			snprintf(out, olen, "error plug failed");
		else
			snprintf(out, olen, "ok plugged");
	} else if (strcmp(verb, "show") == 0) {
		o = (size_t)snprintf(out, olen, "ok %s", fw_plugged(fw) ? "" :
		    "(unplugged) ");
		if (o < olen)
			fw_display(fw, out + o, olen - o);
	} else if (strcmp(verb, "counter") == 0) {
		snprintf(out, olen, "ok %u", fw_counter(fw));
	} else if (strcmp(verb, "fault") == 0 && arg != NULL &&
	    fw_fault_parse(arg, &fault) == 0) {
		fw_set_fault(fw, fault);
		snprintf(out, olen, "ok fault %s", arg);
	} else {
		snprintf(out, olen, "error unknown command");
	}
}

/* One request line per connection, answered at once. */
static void
host_accept(int lfd)
{
	char		 line[HOST_LINE_MAX], out[512];
	struct pollfd	 pfd;
	ssize_t		 n;
	size_t		 got = 0;
	int		 c;

	if ((c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		return;
	pfd.fd = c;
	pfd.events = POLLIN;
	while (got < sizeof(line) - 1 && poll(&pfd, 1, 1000) == 1) {
		if ((n = read(c, line + got, sizeof(line) - 1 - got)) <= 0)
			break;
		got += (size_t)n;
		if (memchr(line, '\n', got) != NULL)
			break;
	}
	line[got] = '\0';
	host_command(line, out, sizeof(out) - 1);
	strcat(out, "\n");
	/* The client reads the answer or has gone: nothing to do either way. */
	if (write(c, out, strlen(out)) == -1)
		fprintf(stderr, "psd2-emuhost: control answer not sent\n");
	close(c);
}

static int
host_listen(const char *path)
{
	struct sockaddr_un	sun;
	int			fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return (-1);
	strcpy(sun.sun_path, path);
	(void)unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 16) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}

static int
child_wait(int ms)
{
	int	status, i;

	for (i = 0; i < ms / 10; i++) {
		if (waitpid(H.child, &status, WNOHANG) == H.child) {
			H.child = 0;
			return (WIFEXITED(status) ? WEXITSTATUS(status) :
			    128 + WTERMSIG(status));
		}
		usleep(10000);
	}
	return (-1);
}

static int
run(int lfd, int sigfd)
{
	struct pollfd			pfd[2];
	struct signalfd_siginfo		si;
	int				rc;

	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	pfd[1].fd = sigfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1 && errno != EINTR)
			return (1);
		if (pfd[0].revents & POLLIN)
			host_accept(lfd);
		if (!(pfd[1].revents & POLLIN) ||
		    read(sigfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGCHLD && H.child > 0) {
			if ((rc = child_wait(10)) >= 0)
				return (rc);
			continue;
		}
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			if (H.child <= 0)
				return (0);
			kill(H.child, SIGTERM);
			if ((rc = child_wait(HOST_KILL_WAIT_MS)) < 0) {
				kill(H.child, SIGKILL);
				rc = child_wait(HOST_KILL_WAIT_MS);
			}
			return (rc < 0 ? 1 : rc);
		}
	}
}

static EVP_PKEY *
load_key(const char *path)
{
	FILE		*fp;
	EVP_PKEY	*pk;

	if ((fp = fopen(path, "r")) == NULL)
		return (NULL);
	pk = PEM_read_PrivateKey(fp, NULL, NULL, NULL);
	fclose(fp);
	return (pk);
}

int
main(int argc, char **argv)
{
	const char	*state = NULL, *sock = NULL, *key = NULL;
	char		*serials = NULL, *s, err[256];
	char	       **cmd = NULL;
	unsigned int	 vid = 0x1209, pid = 0x0001;
	sigset_t	 mask;
	int		 i, lfd, sigfd, rc;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			cmd = argv + i + 1;
			break;
		} else if (strcmp(argv[i], "--state") == 0 && i + 1 < argc)
			state = argv[++i];
		else if (strcmp(argv[i], "--socket") == 0 && i + 1 < argc)
			sock = argv[++i];
		else if (strcmp(argv[i], "--manufacturer-key") == 0 &&
		    i + 1 < argc)
			key = argv[++i];
		else if (strcmp(argv[i], "--vidpid") == 0 && i + 1 < argc) {
			if (sscanf(argv[++i], "%4x:%4x", &vid, &pid) != 2)
				usage();
		} else if (strcmp(argv[i], "--verbose") == 0)
			H.params.verbose = 1;
		else if (serials == NULL && argv[i][0] != '-')
			serials = argv[i];
		else
			usage();
	}
	if (state == NULL || sock == NULL || key == NULL || serials == NULL)
		usage();
	if (cmd != NULL && cmd[0] == NULL)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Block before any thread exists (the testbed starts some), so that
	 * SIGTERM reaches the signalfd instead of killing the harness. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) != 0)
		return (1);
	/* The testbed first: its environment is what the child inherits. */
	if ((H.emu = usbemu_new()) == NULL) {
		fprintf(stderr, "psd2-emuhost: no umockdev testbed\n");
		return (1);
	}
	H.params.statedir = state;
	H.params.vid = (uint16_t)vid;
	H.params.pid = (uint16_t)pid;
	if ((H.params.manufacturer = load_key(key)) == NULL) {
		fprintf(stderr, "psd2-emuhost: cannot read %s\n", key);
		return (1);
	}
	for (s = strtok(serials, ","); s != NULL; s = strtok(NULL, ",")) {
		if (host_add(s, err, sizeof(err)) != 0) {
			fprintf(stderr, "psd2-emuhost: %s: %s\n", s, err);
			return (1);
		}
	}
	if ((sigfd = signalfd(-1, &mask, SFD_CLOEXEC)) == -1 ||
	    (lfd = host_listen(sock)) == -1) {
		fprintf(stderr, "psd2-emuhost: cannot listen on %s\n", sock);
		return (1);
	}
	signal(SIGPIPE, SIG_IGN);
	printf("psd2-emuhost: %zu device(s) on %s, control %s\n", H.nfws,
	    usbemu_root(H.emu), sock);
	if (cmd != NULL) {
		if ((H.child = fork()) == 0) {
			sigprocmask(SIG_UNBLOCK, &mask, NULL);
			execvp(cmd[0], cmd);
			_exit(127);
		}
	}
	rc = run(lfd, sigfd);
	close(lfd);
	(void)unlink(sock);
	for (i = 0; i < (int)H.nfws; i++)
		fw_unplug(H.fws[i]);
	usbemu_free(H.emu);
	for (i = 0; i < (int)H.nfws; i++)
		fw_free(H.fws[i]);
	EVP_PKEY_free(H.params.manufacturer);
	return (rc);
}
