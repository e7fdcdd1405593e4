// SPDX-License-Identifier: GPL-2.0
/* Fuzzes the rules parser (an override file is outside input) and the
 * matcher on what it parsed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const chain[] = { "_raw_spin_lock_irqsave", NULL, "folio_batch_move_lru",
					     "lru_add_drain" };
	struct rule_input in = { .object = "lruvec", .field = "lru_lock", .offset = 80,
				 .ip = "native_queued_spin_lock_slowpath", .chain = chain,
				 .chain_n = 4, .has_chain = true };
	struct rules *r;
	char *text, path[64];

	log_set_max_level(LOG_EMERG);
	text = malloc(size + 1);
	r = rules_new();
	if (!text || !r)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	(void)rules_parse(r, text, "fuzz", 0);		/* as a file of its own */
	(void)rules_load_defaults(r);
	(void)rules_parse(r, text, "fuzz", RULES_OVERRIDE);	/* and as overrides */
	(void)rules_digest(r);
	(void)rules_match(r, &in, path, sizeof(path));
	in.object = NULL;
	in.field = NULL;
	(void)rules_match(r, &in, path, sizeof(path));
	for (size_t i = 0; i < rules_count(r); i++)
		(void)rule_matches(rules_get(r, i), &in);
out:
	rules_free(r);
	free(text);
	return 0;
}
