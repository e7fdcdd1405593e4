// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm import's bundle reader (cli/bundle.c) on arbitrary bytes: the
 * gzip stream, the tar headers, the manifest and the members' checks,
 * extracted into a fresh directory that is removed after each input.
 * Seeded from the foreign-attribution cases packed as bundles
 * (fuzz-bundle.seeds); crashes found are kept in crashes/fuzz-bundle/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bundle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char file[] = "/tmp/mmhitm-fuzz-bundle-XXXXXX", dir[] = "/tmp/mmhitm-fuzz-out-XXXXXX";
	struct bundle_manifest m;
	char err[256];
	int fd = mkstemp(file);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size && mkdtemp(dir)) {
		bundle_extract(file, dir, &m, err, sizeof(err));
		bundle_remove_dir(dir);
	}
	close(fd);
	unlink(file);
	return 0;
}
