# SPDX-License-Identifier: GPL-2.0
#
# mmhitm: one non-recursive Makefile for the daemon, the tool, the load
# generator, the tests and the benchmarks.
#
#   make deps        install the missing Debian packages the build needs (root)
#                    and build libperf
#   make deps-test   install the test lab (root): what make check, make
#                    check-kernels and make demo run; they call it themselves
#   make             build/mmhitmd build/mmhitm build/mmhitm-load
#   make check       unit tests (plain and ASan+UBSan), fuzzers, integration,
#                    faults (kill -9 loop, locks, signals, full disk)
#   make soak        the daemon under the reproducers and process churn for
#                    SOAK_MINUTES (10): RSS, fds, analysis time flat
#   make stress      the tests that have flaked, STRESS_RUNS (100) times each
#                    beside CPU hogs, a dd loop and a second tracer
#   make demo        record this machine for a short while and show the DB
#   make check-kernels  the daemon and the loads on real 6.1/6.12 kernels, the
#                    units under a real systemd (QEMU)
#   make demo-rollout   a real 6.1 -> 6.12 rollout recorded under QEMU
#   make install     PREFIX=/usr/local DESTDIR=
#   make deb         the Debian packages mmhitm and mmhitm-load (debian/),
#                    into $(O)/deb
#
# O=dir puts every build output under dir (default: build).

O		?= build
PREFIX		?= /usr/local
DESTDIR		?=
BINDIR		?= $(PREFIX)/bin
SBINDIR		?= $(PREFIX)/sbin
DATADIR		?= $(PREFIX)/share
MANDIR		?= $(DATADIR)/man
SYSCONFDIR	?= /etc
PKG_CONFIG	?= pkg-config
CC		?= gcc
CLANG		?= clang

V		?= 0
ifeq ($(V),0)
Q		:= @
quiet		= @printf '  %-7s %s\n' $(1) $(2);
else
Q		:=
quiet		=
endif

# --- dependencies ----------------------------------------------------------

# Debian 12 packages the build needs, and nothing else: a host that builds
# its own mmhitm gets no test tool (debian/control's Build-Depends are the
# same list; test-package checks they agree). clang builds the BPF task
# iterator; without it mmhitmd has no mm snapshots.
DEB_BUILD	:= gcc make pkg-config xz-utils libtracefs-dev libtraceevent-dev \
		   libtracecmd-dev libsqlite3-dev libbpf-dev libsystemd-dev libelf-dev \
		   zlib1g-dev linux-source-6.12 clang libcurl4-openssl-dev
# The test lab, installed by make deps-test (which make check,
# check-kernels and demo run first). The fuzzers link libFuzzer
# (libclang-rt); the tests read the databases with sqlite3, count with
# perf and bpftool, run units under systemd, build and lint the packages
# (dpkg-checkbuilddeps wants build-essential besides Build-Depends);
# libfaketime sets the wall clock test-clock's daemons see.
DEB_LAB		:= libclang-rt-14-dev sqlite3 linux-perf bpftool systemd procps util-linux \
		   build-essential debhelper dpkg-dev lintian fakeroot libfaketime
# report tests and make demo: numpy draws the generated fleets (fleetgen.py),
# scipy checks the statistics, Chromium loads the HTML.
# tests/kernels: QEMU, a static busybox for the initramfs, cpio, modinfo,
# mkfs.ext4/debugfs for the results disk, debootstrap for test-systemd's
# Debian userspace.
DEB_KERNELS	:= qemu-system-x86 busybox-static cpio kmod e2fsprogs debootstrap
# trace-cmd: reads back what mmhitm import and the flight recorder handle;
# kernelshark and libkshark-dev (with libjson-c-dev, which its pkg-config
# requires): test-kernelshark.sh loads the snapshots through KernelShark.
# ship tests: two clickhouse-server shards on loopback (tests/integration/
# clickhouse-lib.sh), started and stopped by each test.
DEB_TEST	:= $(DEB_BUILD) $(DEB_LAB) python3 python3-numpy python3-scipy universal-ctags python3-jsonschema chromium curl man-db trace-cmd strace \
		   kernelshark libkshark-dev libjson-c-dev \
		   prometheus prometheus-node-exporter clickhouse-server clickhouse-client \
		   $(DEB_KERNELS)

DEPS		:= $(O)/deps
KSRC_TAR	?= /usr/src/linux-source-6.12.tar.xz
KSRC_DIR	:= $(DEPS)/linux-source-6.12

# libperf: the system's when pkg-config knows it, else built from Debian's
# linux-source-6.12 into $(DEPS) once; the stamp keeps a second make cheap.
ifeq ($(shell $(PKG_CONFIG) --exists libperf 2>/dev/null && echo y),y)
LIBPERF_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags libperf)
LIBPERF_LIBS	:= $(shell $(PKG_CONFIG) --libs libperf)
LIBPERF_STAMP	:=
else
LIBPERF_DIR	:= $(KSRC_DIR)/tools/lib/perf
LIBPERF_CFLAGS	:= -I$(LIBPERF_DIR)/include
LIBPERF_LIBS	:= $(LIBPERF_DIR)/libperf.a $(KSRC_DIR)/tools/lib/api/libapi.a
LIBPERF_STAMP	:= $(DEPS)/libperf.stamp
endif

PKGS		:= libtracefs libtraceevent libtracecmd sqlite3 libbpf libsystemd libcurl zlib
PKG_CFLAGS	:= $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS	:= $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)

# --- flags -----------------------------------------------------------------

WARNINGS	:= -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
		   -Wshadow -Wpointer-arith -Wcast-qual -Wsign-compare \
		   -Wformat=2 -Wundef -Wvla -Wno-unused-parameter \
		   -Wno-missing-field-initializers -Werror=implicit-function-declaration
# One version for the programs and the package: debian/changelog's.
VERSION		:= $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
BASE_CFLAGS	:= -std=gnu11 -D_GNU_SOURCE -DMMHITM_VERSION='"$(VERSION)"' $(WARNINGS) $(LIBPERF_CFLAGS) $(PKG_CFLAGS)
CFLAGS		?= -O2 -g
# CPPFLAGS and LDFLAGS as the environment gives them (dpkg-buildflags'
# hardening: -D_FORTIFY_SOURCE, -z relro -z now).
CPPFLAGS	?=
LDFLAGS		?=
# LAYER_INC: the folders an object may include from (see "layers" below).
ALL_CFLAGS	= $(LAYER_INC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -MMD -MP
LIBS		= $(PKG_LIBS) $(LIBPERF_LIBS) -lm
SAN_FLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		   -fno-sanitize-recover=undefined
FUZZ_FLAGS	:= -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer

# --- layers --------------------------------------------------------------
#
# One folder per role, each an archive that sees only the layers below it
# (docs/architecture.md draws them; tests/integration/test-layers.sh checks
# the drawing against the code). SEES_<folder> lists the folders whose
# headers a folder's objects may include and whose functions they may call,
# its own first. The compiler is given only those -I paths, so an upward
# include finds no header; common/check-layer.sh then refuses an archive
# that calls into a folder it may not see (a hand-written prototype).
# A program's main() lives in the file named after it, outside its archive.

LAYERS		:= common clickhouse engine reports daemon cli load
SEES_common	:= common
SEES_clickhouse	:= clickhouse common
SEES_engine	:= engine common
SEES_reports	:= reports clickhouse common
SEES_daemon	:= daemon engine common
SEES_cli	:= cli reports engine clickhouse common
SEES_load	:= load common
# Archives are linked top-down: a layer's archive before those below it.
LINK_ORDER	:= cli daemon load reports engine clickhouse common

SCHEMA_SQL	:= $(sort $(wildcard schema/[0-9]*.sql))
# The ClickHouse cluster's schema (mmhitm ship --init), compiled in too.
CH_SQL		:= $(sort $(wildcard schema/clickhouse/*.sql))

# Each generated source belongs to the layer that reads it.
SRCS_common	:= $(wildcard common/*.c) $(O)/gen/schema-sql.c $(O)/gen/paths-conf.c
SRCS_clickhouse	:= $(wildcard clickhouse/*.c) $(O)/gen/clickhouse-sql.c
SRCS_engine	:= $(wildcard engine/*.c) $(O)/gen/rules-conf.c
SRCS_reports	:= $(wildcard reports/*.c)
SRCS_daemon	:= $(filter-out daemon/mmhitmd.c daemon/%.bpf.c,$(wildcard daemon/*.c)) \
		   $(O)/gen/mm-snapshot-bpf.c
SRCS_cli	:= $(filter-out cli/mmhitm.c,$(wildcard cli/*.c))
SRCS_load	:= $(filter-out load/mmhitm-load.c,$(wildcard load/*.c))

# Tests, benchmarks and fuzz harnesses see every layer.
ALL_INC		:= $(addprefix -I,$(LAYERS))
LAYER_INC	= $(ALL_INC)
$(foreach l,$(LAYERS),$(eval \
  $(O)/obj/$(l)/%.o $(O)/san/$(l)/%.o $(O)/fuzzobj/$(l)/%.o: LAYER_INC = $(addprefix -I,$(SEES_$(l)))))
$(foreach l,$(LAYERS),$(foreach g,$(filter $(O)/gen/%,$(SRCS_$(l))),$(eval \
  $(foreach k,obj san fuzzobj,$(patsubst %.c,$(O)/$(k)/%.o,$(g))): LAYER_INC = $(addprefix -I,$(SEES_$(l))))))

# lib(1): the archives of a program whose folder is $(1), top-down;
# $(2) is the flavour ("", -san, -fuzz).
layer_libs	= $(foreach l,$(filter $(SEES_$(1)),$(LINK_ORDER)),$(O)/lib/lib$(l)$(2).a)
ALL_LIBS	= $(foreach l,$(LINK_ORDER),$(O)/lib/lib$(l)$(1).a)
LAYER_CHECKS	:= $(foreach l,$(LAYERS),$(O)/lib/$(l).layer-ok)

UNIT_TESTS	:= $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/test-*.c))
FUZZERS		:= $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
BENCH_SRCS	:= $(wildcard bench/*.c)

obj		= $(patsubst %.c,$(O)/$(1)/%.o,$(2))

PROGS		:= $(O)/mmhitmd $(O)/mmhitm $(O)/mmhitm-load
# A program is built once its main file exists.
PROGS		:= $(foreach p,daemon/mmhitmd cli/mmhitm load/mmhitm-load,\
		     $(if $(wildcard $(p).c),$(O)/$(notdir $(p))))
TEST_BINS	:= $(addprefix $(O)/tests/,$(UNIT_TESTS)) \
		   $(addprefix $(O)/tests-san/,$(UNIT_TESTS)) \
		   $(if $(wildcard tests/integration/mmhitm-test-helper.c),$(O)/tests/mmhitm-test-helper)
FUZZ_BINS	:= $(addprefix $(O)/fuzz/,$(FUZZERS))

.PHONY: all deps deps-test deb deb-tree check check-unit check-integration check-kernels fuzz fuzz-long $(FUZZ_LONG_RUNS) bench bench-fleet demo \
	install uninstall clean distclean libperf soak stress check-faults layers
.DELETE_ON_ERROR:
# Objects are kept for the next incremental build, but not as .SECONDARY
# with no prerequisites: that made every target secondary, and a missing
# object (a source moved to another directory) was never rebuilt while
# its archive or test binary looked newer.
.PRECIOUS: $(O)/obj/%.o $(O)/san/%.o $(O)/fuzzobj/%.o

all: $(PROGS)

# --- generated -------------------------------------------------------------

# The migrations are compiled in, so a program never depends on finding
# schema/ at run time.
$(O)/gen/schema-sql.c: $(SCHEMA_SQL) common/gen-schema.sh
	$(call quiet,GEN,$@)mkdir -p $(@D) && sh common/gen-schema.sh $(SCHEMA_SQL) > $@.tmp && mv $@.tmp $@

$(O)/gen/clickhouse-sql.c: $(CH_SQL) common/gen-blob.sh
	$(call quiet,GEN,$@)mkdir -p $(@D) && cat $(CH_SQL) > $(O)/gen/clickhouse.sql && \
	    sh common/gen-blob.sh clickhouse_sql $(O)/gen/clickhouse.sql > $@.tmp && mv $@.tmp $@

# The BPF task iterator of windowed recording's mm snapshots
# (daemon/snapshot.c), compiled in. Where clang cannot build it the object
# is empty, and mmhitmd says per boot that it has no snapshot.
$(O)/gen/mm-snapshot.bpf.o: daemon/mm-snapshot.bpf.c
	$(call quiet,BPF,$@)mkdir -p $(@D) && \
	if command -v $(CLANG) >/dev/null 2>&1; then \
		$(CLANG) -O2 -g -target bpf -I/usr/include/$$($(CC) -dumpmachine) -c $< -o $@; \
	else \
		echo "warning: $(CLANG) not found: mmhitmd without mm snapshots" >&2; : > $@; \
	fi

$(O)/gen/mm-snapshot-bpf.c: $(O)/gen/mm-snapshot.bpf.o common/gen-blob.sh
	$(call quiet,GEN,$@)sh common/gen-blob.sh mm_snapshot_bpf $< > $@.tmp && mv $@.tmp $@

# The default attribution rules, compiled in like the schema.
# The path table, compiled in: every program reads the same one.
$(O)/gen/paths-conf.c: common/paths.conf common/gen-blob.sh
	$(call quiet,GEN,$@)mkdir -p $(@D) && sh common/gen-blob.sh paths_conf $< > $@.tmp && mv $@.tmp $@

$(O)/gen/rules-conf.c: engine/rules.conf engine/gen-rules.sh
	$(call quiet,GEN,$@)mkdir -p $(@D) && sh engine/gen-rules.sh engine/rules.conf > $@.tmp && mv $@.tmp $@

# --- libperf ---------------------------------------------------------------

libperf: $(LIBPERF_STAMP)

$(DEPS)/libperf.stamp: | $(KSRC_TAR)
	$(call quiet,LIBPERF,$(LIBPERF_DIR))mkdir -p $(DEPS) && \
	    tar -xJf $(KSRC_TAR) -C $(DEPS) --wildcards 'linux-source-6.12/tools/*' && \
	    env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $(MAKE) -s -C $(LIBPERF_DIR) O= DESTDIR= \
		EXTRA_CFLAGS=-fPIC libperf.a >/dev/null && \
	    env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS $(MAKE) -s -C $(KSRC_DIR)/tools/lib/api O= \
		EXTRA_CFLAGS=-fPIC libapi.a >/dev/null && \
	    touch $@

$(KSRC_TAR):
	@echo "error: $@ is missing; run 'make deps' (as root) first" >&2; exit 1

# --- compile ---------------------------------------------------------------

$(O)/obj/%.o: %.c | $(LIBPERF_STAMP)
	$(call quiet,CC,$<)mkdir -p $(@D) && $(CC) $(ALL_CFLAGS) -c -o $@ $<

# Where `mmhitm report` looks for the patch map by default.
$(O)/obj/cli/cmd-report.o $(O)/san/cli/cmd-report.o \
$(O)/obj/engine/rules.o $(O)/san/engine/rules.o: ALL_CFLAGS += -DSYSCONFDIR='"$(SYSCONFDIR)"'

$(O)/san/%.o: %.c | $(LIBPERF_STAMP)
	$(call quiet,CC-SAN,$<)mkdir -p $(@D) && $(CC) $(ALL_CFLAGS) -O1 $(SAN_FLAGS) -c -o $@ $<

# One archive per layer and flavour: lib<layer>.a, lib<layer>-san.a,
# lib<layer>-fuzz.a (objects in obj/, san/, fuzzobj/).
$(foreach l,$(LAYERS),$(eval $(O)/lib/lib$(l).a: $(call obj,obj,$(SRCS_$(l)))))
$(foreach l,$(LAYERS),$(eval $(O)/lib/lib$(l)-san.a: $(call obj,san,$(SRCS_$(l)))))
$(foreach l,$(LAYERS),$(eval $(O)/lib/lib$(l)-fuzz.a: $(call obj,fuzzobj,$(SRCS_$(l)))))

$(O)/lib/%.a:
	$(call quiet,AR,$@)mkdir -p $(@D) && rm -f $@ && ar rcs $@ $^

# The link check, per layer: no undefined symbol of its archive is defined
# in a layer it may not see; no source includes through "../".
$(O)/lib/%.layer-ok: $(call ALL_LIBS,) common/check-layer.sh
	$(call quiet,LAYER,$*)sh common/check-layer.sh $* "$(SEES_$*)" $(O)/lib "$(LAYERS)" && touch $@

layers: $(LAYER_CHECKS)

# --- programs --------------------------------------------------------------

# A program links its own layer's archive and those below it, after the
# layer check has passed.
$(O)/mmhitmd: $(O)/obj/daemon/mmhitmd.o $(call layer_libs,daemon,) | $(LAYER_CHECKS)
	$(call quiet,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/mmhitm: $(O)/obj/cli/mmhitm.o $(call layer_libs,cli,) | $(LAYER_CHECKS)
	$(call quiet,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS)

$(O)/mmhitm-load: $(O)/obj/load/mmhitm-load.o $(call layer_libs,load,) | $(LAYER_CHECKS)
	$(call quiet,LD,$@)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) -lpthread

# --- tests -----------------------------------------------------------------

$(O)/tests/%: $(O)/obj/tests/unit/%.o $(call ALL_LIBS,)
	$(call quiet,LD,$@)mkdir -p $(@D) && $(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) -lpthread

$(O)/tests-san/%: $(O)/san/tests/unit/%.o $(call ALL_LIBS,-san)
	$(call quiet,LD,$@)mkdir -p $(@D) && $(CC) $(CFLAGS) $(LDFLAGS) $(SAN_FLAGS) -o $@ $^ $(LIBS) -lpthread

$(O)/tests/mmhitm-test-helper: $(O)/obj/tests/integration/mmhitm-test-helper.o $(call ALL_LIBS,)
	$(call quiet,LD,$@)mkdir -p $(@D) && $(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) -lpthread

# Fuzz targets are built with clang, against the library compiled with
# libFuzzer's coverage instrumentation.
$(O)/fuzzobj/%.o: %.c | $(LIBPERF_STAMP)
	$(call quiet,CC-FUZZ,$<)mkdir -p $(@D) && $(CLANG) $(LAYER_INC) $(BASE_CFLAGS) -g -O1 -MMD -MP \
	    -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -c -o $@ $<

# Archives, like the other libraries, so a fuzzer pulls only what it uses.
$(O)/fuzz/%: tests/fuzz/%.c $(call ALL_LIBS,-fuzz)
	$(call quiet,FUZZ,$@)mkdir -p $(@D) && $(CLANG) $(ALL_INC) $(BASE_CFLAGS) -g -O1 $(FUZZ_FLAGS) \
	    -o $@ $^ $(LIBS)

fuzz: $(FUZZ_BINS)

# FUZZ_SECONDS bounds each fuzzer's run inside make check.
FUZZ_SECONDS	?= 20

# make fuzz-long: every fuzzer for FUZZ_LONG_SECONDS (-j2: two at a time),
# any report failing it; the inputs that found new coverage are merged
# into FUZZ_CORPUS/<fuzzer>, which the next run starts from (copy the
# small ones into tests/fuzz/corpus/ to give them to make check). Each
# fuzzer's output is in $(O)/fuzz-work/<fuzzer>/log; the last lines say
# its executions.
FUZZ_LONG_SECONDS ?= 600
FUZZ_CORPUS	?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mmhitm/fuzz-corpus
FUZZ_LONG_RUNS	:= $(addprefix fuzz-long/,$(FUZZERS))
fuzz-long: $(FUZZ_LONG_RUNS)
	$(Q)for f in $(FUZZERS); do \
	    printf '%-18s %12s executions, %s new inputs kept\n' $$f \
	        "$$(sed -n 's/^stat::number_of_executed_units: *//p' $(O)/fuzz-work/$$f/log)" \
	        "$$(sed -n "s/^$$f: \([0-9]*\) new inputs kept.*/\1/p" $(O)/fuzz-work/$$f/log)"; \
	done
$(FUZZ_LONG_RUNS): fuzz-long/%: $(O)/fuzz/%
	$(Q)O=$(O) sh tests/fuzz/run-fuzzer $< $(FUZZ_LONG_SECONDS) $(FUZZ_CORPUS) > /dev/null 2>&1 || \
	    { tail -20 $(O)/fuzz-work/$*/log; echo "FAIL: $*"; exit 1; }
	$(Q)echo "$*: done, no report"

# tests/run derives the tests expected from the sources (tests/unit/test-*.c
# plain and ASan, tests/fuzz/fuzz-*.c, tests/integration/test-*.sh), as
# UNIT_TESTS and FUZZERS above do, prints "N expected" first and fails when
# a binary is missing or fewer ran; with CI=true (from the environment) a
# skip not in tests/allowed-skips fails too.
check: deps-test all $(TEST_BINS) $(FUZZ_BINS)
	$(Q)O=$(O) FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/run

# The fuzzers link libFuzzer, which comes with the lab.
$(FUZZ_BINS): | deps-test

check-unit: $(TEST_BINS)
	$(Q)O=$(O) sh tests/run unit

check-integration: deps-test all $(TEST_BINS)
	$(Q)O=$(O) sh tests/run integration

check-faults: deps-test all $(TEST_BINS)
	$(Q)O=$(O) sh tests/run faults

# Not in make check: minutes of reproducers and churn (tests/faults/soak.sh).
SOAK_MINUTES	?= 10

soak: deps-test all $(TEST_BINS)
	$(Q)O=$(O) SOAK_MINUTES=$(SOAK_MINUTES) sh tests/faults/soak.sh

# Not in make check: the tests that have flaked, STRESS_RUNS (100) times
# each beside CPU hogs, a dd loop and a second tracer (tests/faults/stress.sh).
STRESS_RUNS	?= 100

stress: deps-test all $(TEST_BINS)
	$(Q)O=$(O) STRESS_RUNS=$(STRESS_RUNS) sh tests/faults/stress.sh

# --- demo ------------------------------------------------------------------

DEMO_DB		?= $(O)/demo/mmhitm.db
DEMO_SECONDS	?= 30

demo: deps-test all
	$(Q)sh tests/demo.sh $(O) $(DEMO_DB) $(DEMO_SECONDS)

# --- bench -----------------------------------------------------------------
#
# make bench: every reproducer this kernel supports, one run each, with
# mmhitmd (windowed and continuous) and perf stat -a coming and going
# around it in slots between slots alone (a switchback), then one daemon
# whose turns alternate with quiet intervals (BENCH_SHARE_SECONDS), and
# the DB writer's ingest rate (bench/run-bench.sh). Results go to
# bench/results/.

BENCH_ROUNDS	?= 5
BENCH_SECONDS	?= 20
BENCH_OFF_SECONDS ?= 10
BENCH_PROGS	:= $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))

bench: deps-test all $(BENCH_PROGS)
	$(Q)O=$(O) BENCH_ROUNDS=$(BENCH_ROUNDS) BENCH_SECONDS=$(BENCH_SECONDS) \
		BENCH_OFF_SECONDS=$(BENCH_OFF_SECONDS) sh bench/run-bench.sh

# make bench-fleet: 100,000, 10,000 and 1,000 hosts x a week in a
# two-shard ClickHouse on loopback: load time, ship throughput, the report's
# wall time, peak RSS and CPU from the cluster at each size and from 1,000
# SQLite files, how they grow, and the statistics' inputs aggregated in the
# cluster (bench/bench-fleet.sh; BENCH_FLEET_HOSTS, _MIDDLE, _SUBSET,
# _ROUNDS, _BIG_ROUNDS, _SHIP, _DAYS, _AGG_ROUNDS, _AGG_BATCH, _REPORTS).
# About 75 minutes and 40 GB in /tmp at the default sizes. Not part of make check.
bench-fleet: deps-test all
	$(Q)O=$(O) sh bench/bench-fleet.sh

$(O)/bench/%: $(O)/obj/bench/%.o $(call ALL_LIBS,)
	$(call quiet,LD,$@)mkdir -p $(@D) && $(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LIBS) -lpthread

# --- real kernels under QEMU (tests/kernels) -------------------------------
#
# Boots Debian's 6.1 and 6.12 cloud kernels (TCG, -smp 2) with a busybox
# initramfs carrying the programs, and asserts on the DB they leave on a
# virtio disk; see tests/kernels/README.md. The kernel packages are fetched
# with apt-get download into KERNEL_CACHE, outside the build tree, so clean
# and distclean keep them. KERNEL_OLD, KERNEL_NEW (package names),
# QEMU_ACCEL and BOOT_TIMEOUT given on the command line reach the scripts.

KERNEL_CACHE	?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mmhitm/kernels
ROOTFS_CACHE	?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/mmhitm/rootfs
ROLLOUT_DIR	?= $(O)/demo-rollout

.PHONY: demo-rollout

# test-hotplug's guest makes its system calls with the test helper.
check-kernels: deps-test all $(O)/tests/mmhitm-test-helper
	$(Q)O=$(O) KERNEL_CACHE=$(KERNEL_CACHE) ROOTFS_CACHE=$(ROOTFS_CACHE) sh tests/run kernels

demo-rollout: deps-test all
	$(Q)O=$(O) KERNEL_CACHE=$(KERNEL_CACHE) ROLLOUT_DIR=$(ROLLOUT_DIR) \
	    sh tests/kernels/test-rollout.sh

# The work files go with clean; the downloaded kernels and the debootstrapped
# userspace stay in KERNEL_CACHE and ROOTFS_CACHE.
.PHONY: clean-kernels
clean: clean-kernels
clean-kernels:
	rm -rf $(O)/kernels $(ROLLOUT_DIR)

# --- install ---------------------------------------------------------------

UNITDIR		?= $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
UNITS		:= mmhitmd.service mmhitm-report.service mmhitm-report.timer \
		   mmhitm-ship.service mmhitm-ship.timer \
		   mmhitm-fleet-report.service mmhitm-fleet-report.timer
MANPAGES	:= $(wildcard man/*.[1-8])
COMPLETIONDIR	?= $(DATADIR)/bash-completion/completions

# Unit files name the installed paths: made at install time, for the
# PREFIX of that install.
SUBST_PATHS	= sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@BINDIR@|$(BINDIR)|g' \
		      -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DATADIR@|$(DATADIR)|g'

$(O)/mmhitm.conf: $(O)/mmhitmd
	$(call quiet,GEN,$@)$(O)/mmhitmd --print-config | sed 's/^\([a-z]\)/# \1/' > $@

install: all $(O)/mmhitm.conf
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/mmhitm $(DESTDIR)$(DATADIR)/mmhitm
	install -m 0755 $(O)/mmhitmd $(DESTDIR)$(SBINDIR)/mmhitmd
	install -m 0755 $(filter-out $(O)/mmhitmd,$(PROGS)) $(DESTDIR)$(BINDIR)/
	for u in $(UNITS); do \
	    if [ -e systemd/$$u.in ]; then $(SUBST_PATHS) systemd/$$u.in > $(DESTDIR)$(UNITDIR)/$$u; \
	    else cp systemd/$$u $(DESTDIR)$(UNITDIR)/$$u; fi; \
	    chmod 0644 $(DESTDIR)$(UNITDIR)/$$u; \
	done
	install -m 0644 $(O)/mmhitm.conf $(DESTDIR)$(DATADIR)/mmhitm/mmhitm.conf.example
	install -m 0644 engine/rules.conf $(DESTDIR)$(DATADIR)/mmhitm/rules.conf
	install -m 0644 systemd/fleet-report.env.example $(DESTDIR)$(DATADIR)/mmhitm/
	install -d $(DESTDIR)$(DATADIR)/mmhitm/prometheus
	install -m 0644 monitoring/mmhitm-alerts.yml $(DESTDIR)$(DATADIR)/mmhitm/prometheus/
	install -d $(DESTDIR)$(DATADIR)/mmhitm/grafana
	install -m 0644 monitoring/mmhitm-dashboard.json $(DESTDIR)$(DATADIR)/mmhitm/grafana/
	@# An existing configuration is the operator's: never overwrite it.
	[ -e $(DESTDIR)$(SYSCONFDIR)/mmhitm/mmhitm.conf ] || \
	    install -m 0644 $(O)/mmhitm.conf $(DESTDIR)$(SYSCONFDIR)/mmhitm/mmhitm.conf
	for m in $(MANPAGES); do \
	    s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
	    install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	@# The patch map is configuration: an edited one is kept.
	[ -e $(DESTDIR)$(SYSCONFDIR)/mmhitm/patches.conf ] || \
	    install -m 0644 reports/patches.conf $(DESTDIR)$(SYSCONFDIR)/mmhitm/patches.conf
	install -m 0644 reports/patches.conf $(DESTDIR)$(DATADIR)/mmhitm/patches.conf.example
	install -d $(DESTDIR)$(COMPLETIONDIR)
	install -m 0644 man/mmhitm.bash-completion $(DESTDIR)$(COMPLETIONDIR)/mmhitm
	ln -sf mmhitm $(DESTDIR)$(COMPLETIONDIR)/mmhitmd
	ln -sf mmhitm $(DESTDIR)$(COMPLETIONDIR)/mmhitm-load

uninstall:
	rm -f $(addprefix $(DESTDIR)$(COMPLETIONDIR)/,mmhitm mmhitmd mmhitm-load)
	rm -f $(DESTDIR)$(SBINDIR)/mmhitmd $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(filter-out $(O)/mmhitmd,$(PROGS))))
	rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	@# The configuration goes only if nobody changed it.
	for c in mmhitm.conf patches.conf; do \
	    if cmp -s $(DESTDIR)$(SYSCONFDIR)/mmhitm/$$c $(DESTDIR)$(DATADIR)/mmhitm/$$c.example; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/mmhitm/$$c; fi; \
	    rm -f $(DESTDIR)$(DATADIR)/mmhitm/$$c.example; \
	done
	rm -f $(DESTDIR)$(DATADIR)/mmhitm/rules.conf $(DESTDIR)$(DATADIR)/mmhitm/prometheus/mmhitm-alerts.yml \
	    $(DESTDIR)$(DATADIR)/mmhitm/fleet-report.env.example
	rm -f $(DESTDIR)$(DATADIR)/mmhitm/grafana/mmhitm-dashboard.json
	-rmdir $(DESTDIR)$(DATADIR)/mmhitm/prometheus $(DESTDIR)$(DATADIR)/mmhitm/grafana 2>/dev/null
	-rmdir $(DESTDIR)$(SYSCONFDIR)/mmhitm $(DESTDIR)$(DATADIR)/mmhitm 2>/dev/null

# --- Debian packages -------------------------------------------------------
#
# make deb: dpkg-buildpackage over a copy of the working tree's files that
# git tracks or does not ignore (the checkout stays clean), the packages
# and their .changes into $(O)/deb.
# Build-Depends missing are named by dpkg-checkbuilddeps; make deps
# installs them.

# deb-tree DEB_TREE=dir: only the copy of the tree (check-kernels builds
# the packages from it in a clean chroot).
DEB_TREE	?= $(O)/deb/mmhitm
deb-tree:
	$(Q)rm -rf $(DEB_TREE) && mkdir -p $(DEB_TREE)
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
		    xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		    xargs -0 cp -P --parents -t $(DEB_TREE); \
	else \
		tar -cf - --exclude='./$(O)' --exclude='./build' --exclude='./build-*' . | \
		    tar -xf - -C $(DEB_TREE); \
	fi

deb:
	$(Q)rm -rf $(O)/deb
	$(Q)$(MAKE) --no-print-directory deb-tree DEB_TREE=$(O)/deb/mmhitm
	$(Q)cd $(O)/deb/mmhitm && env -u MAKEFLAGS -u MAKEOVERRIDES -u MFLAGS -u MAKELEVEL \
	    dpkg-buildpackage -us -uc -b >../build.log 2>&1 || \
	    { tail -30 ../build.log >&2; echo "error: dpkg-buildpackage failed; the log: $(O)/deb/build.log" >&2; exit 1; }
	$(Q)ls $(O)/deb/*.deb

# --- housekeeping ----------------------------------------------------------

# apt_install(packages, target): what Debian lacks of the list gets
# installed (as root; otherwise one line naming them and the target).
apt_install	= missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	    done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "error: missing packages:" $$missing"; run 'make $(2)' as root" >&2; exit 1; \
		fi; \
		echo "  APT     "$$missing; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null || \
		{ apt-get update -q >/dev/null && \
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; } || exit 1; \
	fi

# deps: what the build needs; libperf gets built.
deps:
	$(Q)$(call apt_install,$(DEB_BUILD),deps)
	$(Q)$(MAKE) --no-print-directory libperf

# deps-test: the test lab. Where dpkg is not (another distribution), the
# tests say what they lack and skip.
deps-test:
	$(Q)if command -v dpkg-query >/dev/null; then $(call apt_install,$(DEB_TEST),deps-test); \
	else echo "deps-test: no dpkg here; the tests that lack a tool will skip" >&2; fi

clean:
	rm -rf $(O)/obj $(O)/san $(O)/fuzzobj $(O)/gen $(O)/tests $(O)/tests-san $(O)/fuzz \
	    $(O)/*.a $(PROGS) $(O)/demo

distclean:
	rm -rf $(O)

-include $(shell find $(O)/obj $(O)/san $(O)/fuzzobj -name '*.d' 2>/dev/null)
