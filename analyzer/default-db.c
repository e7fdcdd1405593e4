// SPDX-License-Identifier: GPL-2.0
/* The database the commands read by default. Outside mmhitm.c so that
 * whatever links the command files without main() (fuzzers) links. */
#include <stdlib.h>

#include "commands.h"

const char *default_db_path(void)
{
	const char *p = getenv("MMHITM_DB");

	return p && *p ? p : "/var/lib/mmhitm/mmhitm.db";
}
