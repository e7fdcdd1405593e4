// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "boots.h"
#include "db.h"
#include "log.h"
#include "util.h"

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

static void bind_pos(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int host_store(sqlite3 *db, const char *machine_id, const char *hostname, int64_t *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st,
		       "INSERT INTO hosts(machine_id, hostname) VALUES (?1, ?2)"
		       " ON CONFLICT(machine_id) DO UPDATE SET hostname = excluded.hostname"
		       " RETURNING host_id");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, machine_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, hostname, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_step_failed(st, rc);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

static int existing_boot(sqlite3 *db, int64_t host_id, const char *uuid, int64_t *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	*ret = 0;
	r = db_prepare(db, &st, "SELECT boot_id FROM boots WHERE host_id = ?1 AND boot_uuid = ?2");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	return -EEXIST;
}

int boot_row_store(sqlite3 *db, const struct boot_row *b, int64_t *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	bool live = strcmp(b->source, "live") == 0;
	int64_t host_id;
	int r, rc;

	r = host_store(db, b->machine_id, b->hostname, &host_id);
	if (r < 0)
		return r;
	/* Only a live boot is refreshed: its CPUs, PMU and lru_gen change
	 * while it runs. An import is named after its content, so meeting it
	 * again means the same file twice. */
	r = db_prepare(db, &st, live ?
		"INSERT INTO boots(host_id, boot_uuid, source, boot_time_ns, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, kernel_build_id, arch, nr_cpus_online, nr_cpus_possible,"
		" cache_line_size, page_size, pmu_kind, pmu_detail, lru_gen, lru_gen_features, btf)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" coalesce(?17, 'unknown'), ?18, ?19)"
		" ON CONFLICT(host_id, boot_uuid) DO UPDATE SET last_seen_ns = excluded.last_seen_ns,"
		" nr_cpus_online = excluded.nr_cpus_online, pmu_kind = excluded.pmu_kind,"
		" pmu_detail = excluded.pmu_detail, lru_gen = excluded.lru_gen,"
		" lru_gen_features = excluded.lru_gen_features"
		" RETURNING boot_id" :
		"INSERT INTO boots(host_id, boot_uuid, source, boot_time_ns, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, kernel_build_id, arch, nr_cpus_online, nr_cpus_possible,"
		" cache_line_size, page_size, pmu_kind, pmu_detail, lru_gen, lru_gen_features, btf)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
		" coalesce(?17, 'unknown'), ?18, ?19)"
		" RETURNING boot_id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_text(st, 2, b->boot_uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, b->source, -1, SQLITE_STATIC);
	bind_pos(st, 4, b->boot_time_ns);
	sqlite3_bind_int64(st, 5, b->first_seen_ns);
	sqlite3_bind_int64(st, 6, b->last_seen_ns);
	bind_text(st, 7, b->kernel_release);
	bind_text(st, 8, b->kernel_version);
	bind_text(st, 9, b->kernel_build_id);
	bind_text(st, 10, b->arch);
	sqlite3_bind_int(st, 11, b->nr_cpus_online);
	bind_pos(st, 12, b->nr_cpus_possible);
	sqlite3_bind_int(st, 13, b->cache_line_size);
	sqlite3_bind_int(st, 14, b->page_size);
	bind_text(st, 15, b->pmu_kind);
	bind_text(st, 16, b->pmu_detail);
	bind_text(st, 17, b->lru_gen);
	bind_text(st, 18, b->lru_gen_features);
	bind_text(st, 19, b->btf);
	rc = sqlite3_step(st);
	if (!live && (rc & 0xff) == SQLITE_CONSTRAINT)
		return existing_boot(db, host_id, b->boot_uuid, ret);
	if (rc != SQLITE_ROW)
		return db_step_failed(st, rc);
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}
