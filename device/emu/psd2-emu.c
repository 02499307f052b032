/*
 * psd2-emu: the buttons of the emulated authenticators.
 *
 *	psd2-emu press|decline|unplug|plug|show|counter SERIAL
 *	psd2-emu pin SERIAL PIN		(the PIN keypad, before press)
 *	psd2-emu unlock SERIAL PUK NEWPIN	(staff: reset a locked PIN)
 *	psd2-emu setcounter SERIAL N	(tests: signature counter)
 *	psd2-emu fault SERIAL none|noanswer|stall|badframe|unplugmid|
 *	    wrongkey|repeatcounter|busy|badattest|nouv
 *	psd2-emu add SERIAL | list
 *
 * It talks to psd2-emuhost's control socket: $PSD2_EMU_SOCKET, default
 * var/emu/emu.sock. Exit status 0 when the harness answered "ok".
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define EMU_TIMEOUT_MS	3000

int
main(int argc, char **argv)
{
	struct sockaddr_un	 sun;
	struct pollfd		 pfd;
	const char		*path;
	char			 line[512], reply[600];
	size_t			 got = 0, o = 0;
	ssize_t			 n;
	int			 fd, i;

	if (argc < 2 || argc > 5) {
		fprintf(stderr, "usage: psd2-emu press|decline|unplug|plug|"
		    "show|counter SERIAL | pin SERIAL PIN | unlock SERIAL PUK "
		    "NEWPIN | setcounter SERIAL N | fault SERIAL NAME | "
		    "add SERIAL | list\n");
		return (2);
	}
	for (i = 1; i < argc; i++) {
		if (strlen(argv[i]) > 64) {
			fprintf(stderr, "psd2-emu: argument too long\n");
			return (2);
		}
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s%s",
		    i > 1 ? " " : "", argv[i]);
	}
	snprintf(line + o, sizeof(line) - o, "\n");
	if ((path = getenv("PSD2_EMU_SOCKET")) == NULL)
		path = "var/emu/emu.sock";
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "psd2-emu: socket path too long\n");
		return (1);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "psd2-emu: no emulator harness at %s "
		    "(device/sandbox-up.sh starts one)\n", path);
		return (1);
	}
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		close(fd);
		return (1);
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (got < sizeof(reply) - 1 && poll(&pfd, 1, EMU_TIMEOUT_MS) == 1) {
		if ((n = read(fd, reply + got, sizeof(reply) - 1 - got)) <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	reply[got] = '\0';
	if (got == 0) {
		fprintf(stderr, "psd2-emu: no answer\n");
		return (1);
	}
	if (strncmp(reply, "ok", 2) == 0) {
		fputs(reply[2] == ' ' ? reply + 3 : reply + 2, stdout);
		return (0);
	}
	fputs(reply, stderr);
	return (1);
}
