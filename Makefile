# psd2gate: one Kore binary (Debian's Kore 4.1.0 source with our patches),
# the operator CLI, the device daemon and the test suites.
#
#   make            build the programs into build/ (or $(BUILD))
#   make run        the sandbox on http://127.0.0.1:8080 (first installs
#                   the packages it needs: tests/deps.sh run)
#   make test       every test suite, then the sanitizer run (first
#                   installs those and the test tools: tests/deps.sh test)
#   make bench      wrk side by side with a static route
#   make fuzz       libFuzzer harnesses (FUZZ_SECONDS each)

BUILD ?= build
SANITIZE ?=
FUZZ_SECONDS ?= 30
PYTHON = /usr/bin/python3

# Flags of installed packages are read by the shell when a recipe runs,
# never when make reads this file: on a new machine `make run` and `make
# test` install the packages (deps) first, and a value read at parse time
# would be empty (tests/build/check-makefiles.sh keeps it so).
PG_INCLUDE = -I$$(pg_config --includedir)

CC = gcc
KORE_SRC = /usr/share/kore
KORE_DIR = $(BUILD)/kore
KORE_PATCHES = $(sort $(wildcard conf/kore-patches/*.patch))
KORE_FLAGS = PGSQL=1 TASKS=1 KORE_SINGLE_BINARY=1
ifneq ($(SANITIZE),)
KORE_FLAGS += SANITIZE=address,undefined KORE_EXTRA_CFLAGS="-DKORE_NO_SECCOMP -fno-omit-frame-pointer"
endif

# A bare `make` builds everything, whatever rule an included file names
# first.
.DEFAULT_GOAL := all

# HARDEN_CFLAGS, HARDEN_LDFLAGS and SAN_FLAGS (src/build/flags.mk), the
# common library $(COMMON_LIB) and its rules.
include src/common/common.mk

CFLAGS = -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wstrict-prototypes -Wmissing-prototypes -Wshadow -Wpointer-arith \
	$(HARDEN_CFLAGS) -MMD -MP -Isrc -I$(BUILD)/gen $(PG_INCLUDE) \
	$(SAN_FLAGS)
KORE_CFLAGS = -I$(KORE_DIR)/include/kore -I$(KORE_DIR)/obj \
	-DKORE_SINGLE_BINARY -DKORE_USE_PGSQL -DKORE_USE_TASKS
LIBS = -lssl -lcrypto -ljansson -largon2 -lfido2 -lcbor -lpq -lpthread -ldl
LDFLAGS = $(HARDEN_LDFLAGS) $(SAN_FLAGS)

# The page templates and the language choice, shared by psd2gate and
# psd2ctl; everything else they share is in $(COMMON_LIB).
WEB_SHARED_SRC = src/web/template.c src/web/i18n_pick.c
APP_SRC = $(filter-out $(WEB_SHARED_SRC),$(wildcard src/*.c src/*/*.c))
APP_SRC := $(filter-out src/common/% src/ctl/% src/build/%,$(APP_SRC))
CTL_SRC = $(wildcard src/ctl/*.c)

WEB_SHARED_OBJ = $(WEB_SHARED_SRC:src/%.c=$(BUILD)/obj/%.o)
APP_OBJ = $(APP_SRC:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/embedded.o
CTL_OBJ = $(CTL_SRC:src/%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/migrations.o

EMBED = $(BUILD)/bin/psd2-embed
TEMPLATES = $(sort $(wildcard templates/*.html))
ASSETS = $(sort $(wildcard assets/*.css assets/*.js assets/i18n/*.json)) assets/openapi.json
MIGRATIONS = $(sort $(wildcard src/db/migrations/*.sql)) \
	$(sort $(wildcard src/db/functions/*.sql)) \
	$(sort $(wildcard src/db/repairs/*.sql))

.PHONY: all run test test-api test-browser test-kore bench bench-audit fuzz clean deps \
	deps-test \
	sanitize-test
all: $(BUILD)/bin/psd2gate $(BUILD)/bin/psd2ctl device-all

# What make all and make run need (deps), and that plus the test tools
# (deps-test, for make test): tests/deps.sh names both sets.
deps:
	@sh tests/deps.sh run

deps-test:
	@sh tests/deps.sh test

$(KORE_DIR)/.patched: $(KORE_PATCHES)
	rm -rf $(KORE_DIR)
	mkdir -p $(BUILD)
	cp -R $(KORE_SRC) $(KORE_DIR)
	for p in $(KORE_PATCHES); do \
		patch -s -d $(KORE_DIR) -p1 --no-backup-if-mismatch < $$p || exit 1; \
	done
	touch $@

$(KORE_DIR)/.built: $(KORE_DIR)/.patched
	$(MAKE) -s -C $(KORE_DIR) objects OBJDIR=obj $(KORE_FLAGS) >/dev/null
	touch $@

$(EMBED): src/build/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -Wall -Wextra -Werror $(HARDEN_CFLAGS) -o $@ $< \
	    $(HARDEN_LDFLAGS)

$(BUILD)/gen/embedded.c: $(EMBED) $(TEMPLATES) $(ASSETS)
	@mkdir -p $(dir $@)
	$(EMBED) $@ $(TEMPLATES) $(ASSETS)

$(BUILD)/gen/migrations.c: $(EMBED) $(MIGRATIONS)
	@mkdir -p $(dir $@)
	$(EMBED) $@ $(MIGRATIONS)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/web/template.o $(BUILD)/obj/web/i18n_pick.o: $(BUILD)/obj/web/%.o: src/web/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/ctl/%.o: src/ctl/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: src/%.c $(KORE_DIR)/.built
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(KORE_CFLAGS) -c $< -o $@

# -rdynamic: Kore finds the handlers the configuration names by dlsym().
$(BUILD)/bin/psd2gate: $(KORE_DIR)/.built $(APP_OBJ) $(WEB_SHARED_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(KORE_DIR)/obj/*.o $(APP_OBJ) $(WEB_SHARED_OBJ) \
	    $(COMMON_LIB) -rdynamic $(LDFLAGS) $(LIBS)

$(BUILD)/bin/psd2ctl: $(CTL_OBJ) $(WEB_SHARED_OBJ) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $(CTL_OBJ) $(WEB_SHARED_OBJ) $(COMMON_LIB) $(LDFLAGS) \
	    $(LIBS)

# A change of the flags rebuilds everything they went into.
$(APP_OBJ) $(CTL_OBJ) $(WEB_SHARED_OBJ) $(EMBED): src/build/flags.mk

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
include tests/unit/unit.mk
include device/device.mk
-include tests/tests.mk
include tests/kore/kore.mk
include tests/ais/ais.mk
include tests/bg/bg.mk
include tests/kpi/kpi.mk
include tests/pis/pis.mk
include tests/tpp/tpp.mk
include tests/downtime/downtime.mk

clean:
	rm -rf build build-asan

# deps, then the build in a make of its own (in this order, even with -j).
run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@sh conf/sandbox-run.sh

# Its own PostgreSQL cluster (var/pg-bench) on a free port (or
# PSD2_BENCH_PGPORT), stopped afterwards; see tests/bench/bench.sh.
bench: all
	@PSD2_PGDIR=$(CURDIR)/var/pg-bench PSD2_PGPORT=$(PSD2_BENCH_PGPORT) \
	    PSD2_PGCLUSTER_HELD= sh tests/pgcluster.sh run sh tests/bench/bench.sh

# Only the audit section of the bench (tests/bench/audit.sh), same cluster.
bench-audit: all
	@PSD2_PGDIR=$(CURDIR)/var/pg-bench PSD2_PGPORT=$(PSD2_BENCH_PGPORT) \
	    PSD2_PGCLUSTER_HELD= sh tests/pgcluster.sh run sh tests/bench/audit.sh

fuzz: fuzz-unit fuzz-device fuzz-tpp
