/* container/floor/floor.c: the do-nothing server that measures podman's floor.
 *
 * Static, no libraries beyond libc: binds 0.0.0.0:$PORT (default 8080), prints
 * "floor: ready port=N" on stderr, answers every connection with one fixed
 * "200 OK" and closes it; SIGTERM exits 0. Started exactly like the primed
 * variants, its start-to-first-200 is the container engine's own cost, so a
 * variant's figure minus this one is what primed itself adds.
 * Not a server: no parsing, no keep-alive, one connection at a time.
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_term(int sig)
{
	(void)sig;
	_exit(0);
}

int main(void)
{
	static const char resp[] =
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n";
	const char *p = getenv("PORT");
	int one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p ? atoi(p) : 8080) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 128) < 0) {
		perror("floor: socket/bind/listen");
		return 1;
	}
	fprintf(stderr, "floor: ready port=%d\n", ntohs(a.sin_port));
	for (;;) {
		char buf[4096];
		int c = accept(fd, NULL, NULL);
		if (c < 0)
			continue;
		/* Read the request head once (enough for a GET) so the client never sees a reset. */
		(void)!read(c, buf, sizeof buf);
		(void)!write(c, resp, sizeof resp - 1);
		close(c);
	}
}
