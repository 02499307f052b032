# tests/kore/kore.mk: regression tests for conf/kore-patches/.
#
# Included by the top Makefile (uses its KORE_DIR, KORE_CFLAGS, BUILD,
# SANITIZE, SAN_FLAGS and the $(KORE_DIR)/.built target), or standalone:
#
#   make -f Makefile -f tests/kore/kore.mk test-kore
#   make -f tests/kore/kore.mk test-kore                 (no top Makefile)
#   make -f tests/kore/kore.mk test-kore SANITIZE=1 BUILD=build-asan
#
# test-kore builds $(BUILD)/tests/kore/echo_app against the patched Kore
# objects, the way psd2gate itself is linked, and runs the pytest file.

ifndef KT_INCLUDED
KT_INCLUDED := 1

# ---- defaults when used without the top Makefile ---------------------------
ifeq ($(KORE_DIR),)
BUILD ?= build
SANITIZE ?=
PYTHON ?= /usr/bin/python3
CC ?= gcc
KORE_SRC ?= /usr/share/kore
KORE_DIR := $(BUILD)/kore
KORE_PATCHES := $(sort $(wildcard conf/kore-patches/*.patch))
KT_KORE_FLAGS := PGSQL=1 TASKS=1 KORE_SINGLE_BINARY=1
ifneq ($(SANITIZE),)
KT_KORE_FLAGS += SANITIZE=address,undefined KORE_EXTRA_CFLAGS="-DKORE_NO_SECCOMP -fno-omit-frame-pointer"
endif
KORE_CFLAGS := -I$(KORE_DIR)/include/kore -I$(KORE_DIR)/obj \
	-DKORE_SINGLE_BINARY -DKORE_USE_PGSQL -DKORE_USE_TASKS

$(KORE_DIR)/.patched: $(KORE_PATCHES)
	rm -rf $(KORE_DIR)
	mkdir -p $(BUILD)
	cp -R $(KORE_SRC) $(KORE_DIR)
	for p in $(KORE_PATCHES); do \
		patch -s -d $(KORE_DIR) -p1 --no-backup-if-mismatch < $$p || exit 1; \
	done
	touch $@

$(KORE_DIR)/.built: $(KORE_DIR)/.patched
	$(MAKE) -s -C $(KORE_DIR) objects OBJDIR=obj $(KT_KORE_FLAGS) >/dev/null
	touch $@
endif

PYTHON ?= /usr/bin/python3

# ---- the echo application ------------------------------------------------
KT_DIR := $(BUILD)/tests/kore
KT_BIN := $(KT_DIR)/echo_app
KT_OBJ := $(KT_DIR)/echo_app.o
# HARDEN_CFLAGS, HARDEN_LDFLAGS, SAN_FLAGS (already read by the top Makefile).
include src/build/flags.mk
KT_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
	-Wstrict-prototypes -Wmissing-prototypes -Wshadow -Wpointer-arith \
	$(HARDEN_CFLAGS) -I$$(pg_config --includedir) $(SAN_FLAGS)
KT_LDFLAGS := -rdynamic $(HARDEN_LDFLAGS) $(SAN_FLAGS)
KT_LIBS := -lssl -lcrypto -lpq -lpthread -ldl
KT_PYTEST_ARGS ?=
# The sanitizer build has no seccomp (KORE_NO_SECCOMP); leaks in Kore's own
# shutdown path are not what these tests look for.
KT_ENV := KT_ECHO_APP=$(abspath $(KT_BIN)) \
	$(if $(SANITIZE),KT_SANITIZE=1 ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 \
	UBSAN_OPTIONS=print_stacktrace=1)

$(KT_OBJ): tests/kore/echo_app.c $(KORE_DIR)/.built
	@mkdir -p $(dir $@)
	$(CC) $(KT_CFLAGS) $(KORE_CFLAGS) -c $< -o $@

$(KT_BIN): $(KT_OBJ) $(KORE_DIR)/.built
	$(CC) -o $@ $(KORE_DIR)/obj/*.o $(KT_OBJ) $(KT_LDFLAGS) $(KT_LIBS)

.PHONY: test-kore kore-echo-app
kore-echo-app: $(KT_BIN)

# Through tests/run-suite.sh like the other pytest suites: one closing
# line "kore: N passed, N failed" and no unexplained skip.
test-kore: $(KT_BIN)
	@$(KT_ENV) PSD2_SUITE_LABEL=kore$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh kore $(KT_PYTEST_ARGS)

endif
