// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "report-model.h"
int report_write_html(const struct report *r, FILE *f)
{
	(void)r; (void)f;
	return -EOPNOTSUPP;
}
