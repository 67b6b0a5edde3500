#include "random.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "error_internal.h"

int lm_random_hex(char *out, size_t nbytes)
{
	unsigned char buf[64];
	size_t i, got = 0;
	ssize_t n;
	int fd;

	if (nbytes > sizeof(buf))
		return lm_error_set(LM_EINVALID, "lm_random_hex: at most %zu bytes at once", sizeof(buf));
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) < 0)
		return lm_error_set(LM_EIO, "cannot open /dev/urandom: %s", strerror(errno));
	while (got < nbytes) {
		n = read(fd, buf + got, nbytes - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(fd);
			return lm_error_set(LM_EIO, "cannot read /dev/urandom: %s", n < 0 ? strerror(errno) : "end of file");
		}
		got += (size_t)n;
	}
	close(fd);
	for (i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", buf[i]);
	out[2 * nbytes] = '\0';
	return 0;
}
