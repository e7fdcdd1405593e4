# SPDX-License-Identifier: GPL-2.0
# Two clickhouse-server shards on loopback for the ship tests: sourced after
# lib.sh, never run. ch_start starts them (their own data directories under
# a temporary directory, small caches, one query thread each: the build
# machine has 2 CPUs shared with everything else), ch_stop stops them by
# PID; ch_start installs a trap that does it however the test ends (a
# test that sets its own EXIT trap calls ch_stop from it).
#
# CH_SERVER_MEMORY and CH_QUERY_MEMORY (bytes) raise the servers' and a
# query's memory limits (1 GiB, 512 MiB) for make bench-fleet.
#
# Shard 1: HTTP 18123, TCP 19000; shard 2: HTTP 28123, TCP 29000. Both
# define the cluster "mmhitm" of the two, so either one can serve the
# Distributed tables. CH_URL is shard 1's HTTP address.

CH_HTTP1=${CH_HTTP1:-18123}
CH_TCP1=${CH_TCP1:-19000}
CH_HTTP2=${CH_HTTP2:-28123}
CH_TCP2=${CH_TCP2:-29000}
CH_URL=http://127.0.0.1:$CH_HTTP1
CH_URL2=http://127.0.0.1:$CH_HTTP2
CH_DIR=
CH_PID1=
CH_PID2=
CH_AS=

# ch_config N HTTP TCP: the server configuration of shard N.
ch_config() {
	d=$CH_DIR/s$1
	mkdir -p "$d/data" "$d/tmp" "$d/user_files" "$d/format_schemas"
	cat > "$d/config.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$d/server.log</log><errorlog>$d/err.log</errorlog>
    <size>10M</size><count>1</count></logger>
  <http_port>$2</http_port>
  <tcp_port>$3</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path>
  <tmp_path>$d/tmp/</tmp_path>
  <user_files_path>$d/user_files/</user_files_path>
  <format_schema_path>$d/format_schemas/</format_schema_path>
  <mark_cache_size>16777216</mark_cache_size>
  <uncompressed_cache_size>16777216</uncompressed_cache_size>
  <max_server_memory_usage>${CH_SERVER_MEMORY:-1073741824}</max_server_memory_usage>
  <max_concurrent_queries>16</max_concurrent_queries>
  <max_connections>64</max_connections>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <remote_servers>
    <mmhitm>
      <shard><replica><host>127.0.0.1</host><port>$CH_TCP1</port></replica></shard>
      <shard><replica><host>127.0.0.1</host><port>$CH_TCP2</port></replica></shard>
    </mmhitm>
  </remote_servers>
</yandex>
EOF
	cat > "$d/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>${CH_QUERY_MEMORY:-536870912}</max_memory_usage>
    <max_threads>1</max_threads></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <shipper><password>${CH_PASSWORD:-s3cret}</password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></shipper>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
EOF
}

# ch_start: both shards up and answering, or a skip that says why.
ch_start() {
	command -v clickhouse-server >/dev/null 2>&1 ||
		[ -x /usr/sbin/clickhouse-server ] ||
		skip "clickhouse-server is not installed (make deps-test installs it)"
	command -v curl >/dev/null 2>&1 || skip "curl is not installed"
	for p in $CH_HTTP1 $CH_TCP1 $CH_HTTP2 $CH_TCP2; do
		if curl -s -o /dev/null "http://127.0.0.1:$p/" 2>/dev/null ||
		   (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			skip "port $p on 127.0.0.1 is taken by another program"
		fi
	done
	CH_DIR=$(mktemp -d /tmp/mmhitm-ch.XXXXXX)
	# A signal ends the test (a trap alone would resume it, without its
	# servers); the EXIT trap then stops them.
	trap ch_stop EXIT
	trap 'exit 130' INT TERM HUP PIPE
	ch_config 1 "$CH_HTTP1" "$CH_TCP1"
	ch_config 2 "$CH_HTTP2" "$CH_TCP2"
	# The package's own user when it made one: the server refuses nothing
	# as root, but data files owned by it are what production has.
	as=
	if id clickhouse >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
		chown -R clickhouse: "$CH_DIR"
		as="setpriv --reuid=clickhouse --regid=clickhouse --clear-groups"
	fi
	CH_AS=$as
	ch_up 1
	ch_up 2
}

# ch_up N: starts shard N (again, on the data it had) and waits for it.
ch_up() {
	$CH_AS /usr/sbin/clickhouse-server --config-file="$CH_DIR/s$1/config.xml" \
		>> "$CH_DIR/s$1/stdout" 2>&1 &
	eval "CH_PID$1=$!"
	url=$CH_URL; [ "$1" = 2 ] && url=$CH_URL2
	if ! wait_until 60 curl -sf "$url/ping"; then
		tail -20 "$CH_DIR/s$1/err.log" "$CH_DIR/s$1/stdout" 2>/dev/null
		skip "clickhouse-server did not answer on $url within 60 s"
	fi
}

# ch_down N: stops shard N by its PID (SIGTERM, then SIGKILL after 10 s).
ch_down() {
	eval "p=\${CH_PID$1:-}"
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	t=100
	while kill -0 "$p" 2>/dev/null && [ $t -gt 0 ]; do sleep 0.1; t=$((t - 1)); done
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	eval "CH_PID$1="
}

# ch_stop: stops the shards this test started and removes their data.
ch_stop() {
	ch_down 1
	ch_down 2
	[ -n "$CH_DIR" ] && rm -rf "$CH_DIR"
	CH_DIR=
}

# chq SQL [URL]: one query, TabSeparated result.
chq() { curl -sS --fail-with-body "${2:-$CH_URL}/" --data-binary "$1"; }
