# Unit tests (cmocka) and libFuzzer harnesses for the Kore-independent
# building blocks in src/common and src/web.
#
# Included by the top-level Makefile; also works on its own:
#	make -f tests/unit/unit.mk test-unit [SANITIZE=1]
#	make -f tests/unit/unit.mk fuzz-unit [FUZZ_SECONDS=30]
# Only UNIT_-prefixed variables are defined here (plus BUILD, SANITIZE and
# FUZZ_SECONDS defaults, which the top-level Makefile may already set).

BUILD		?= build
SANITIZE	?=
FUZZ_SECONDS	?= 30

# Keep the includer's default goal: this fragment must not hijack "make".
# Run on its own, plain "make -f tests/unit/unit.mk" means test-unit.
UNIT_SAVED_GOAL	:= $(.DEFAULT_GOAL)
UNIT_STANDALONE	:= $(if $(filter 1,$(words $(MAKEFILE_LIST))),1)

UNIT_TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
# Sanitized objects live apart, so switching SANITIZE never mixes them.
UNIT_OUT	:= $(BUILD)/unit$(if $(SANITIZE),/san)

UNIT_CC		?= cc
UNIT_FUZZ_CC	?= clang
UNIT_CFLAGS	:= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 \
		    -I$(UNIT_TOP)/src/common -I$(UNIT_TOP)/src/web \
		    -MMD -MP
UNIT_LDFLAGS	:=
UNIT_LIBS	:= -lcrypto -ljansson -lfido2 -lcbor -lcmocka

# Any non-empty SANITIZE (normally 1), as in the top-level Makefile.
ifneq ($(SANITIZE),)
UNIT_SANFLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		    -fno-sanitize-recover=all
UNIT_CFLAGS	+= $(UNIT_SANFLAGS)
UNIT_LDFLAGS	+= $(UNIT_SANFLAGS)
endif

UNIT_SRCS	:= $(addprefix $(UNIT_TOP)/src/common/, crypto.c encoding.c \
		    totp.c keyring.c secretbox.c sealed.c money.c httpdate.c \
		    devcur.c devtext.c textrule.c redirect_uri.c jws.c \
		    pkey_cache.c webauthn.c webauthn_origin.c \
		    webauthn_trust.c) \
		    $(addprefix $(UNIT_TOP)/src/web/, template.c i18n_pick.c)
UNIT_OBJS	:= $(patsubst $(UNIT_TOP)/src/%.c,$(UNIT_OUT)/obj/%.o,$(UNIT_SRCS))
UNIT_LIB	:= $(UNIT_OUT)/libunit.a

UNIT_TESTS	:= $(sort $(wildcard $(UNIT_TOP)/tests/unit/test_*.c))
UNIT_BINS	:= $(patsubst $(UNIT_TOP)/tests/unit/%.c,$(UNIT_OUT)/%, \
		    $(UNIT_TESTS))

$(UNIT_OUT)/obj/%.o: $(UNIT_TOP)/src/%.c
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -c -o $@ $<

$(UNIT_LIB): $(UNIT_OBJS)
	@rm -f $@
	ar rcs $@ $(UNIT_OBJS)

$(UNIT_OUT)/test_%: $(UNIT_TOP)/tests/unit/test_%.c $(UNIT_LIB)
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_LDFLAGS) $(UNIT_LIB) \
	    $(UNIT_LIBS)

# The password task (src/psu) against Kore's own headers, with Kore's task
# calls stood in for by the test: the headers come from the Kore build
# (its .patched step unpacks them).
UNIT_KORE_DIR	?= $(BUILD)/kore
UNIT_TASK_SRCS	:= $(UNIT_TOP)/src/psu/password_task.c \
		    $(UNIT_TOP)/src/common/passhash.c

$(UNIT_OUT)/test_password_task: $(UNIT_TOP)/tests/unit/test_password_task.c \
    $(UNIT_TASK_SRCS) $(UNIT_LIB) $(UNIT_KORE_DIR)/.patched
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -I$(UNIT_TOP)/src \
	    -I$(UNIT_KORE_DIR)/include/kore -I$(UNIT_KORE_DIR)/obj \
	    -DKORE_USE_TASKS -o $@ $< $(UNIT_TASK_SRCS) $(UNIT_LDFLAGS) \
	    $(UNIT_LIB) $(UNIT_LIBS) -largon2 -lpthread

# The KPI classes of requests (src/metrics), Kore-independent.
$(UNIT_OUT)/test_kpi_class: $(UNIT_TOP)/tests/unit/test_kpi_class.c \
    $(UNIT_TOP)/src/metrics/kpi_class.c
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -I$(UNIT_TOP)/src -o $@ $< \
	    $(UNIT_TOP)/src/metrics/kpi_class.c $(UNIT_LDFLAGS) -lcmocka

# Runs every test binary with cmocka's TAP output, counts test cases
# ("ok" / "not ok" lines). A binary that dies without reporting a failed
# case (sanitizer abort, crash) counts as one failure.
test-unit: $(UNIT_BINS)
	@pass=0; fail=0; \
	for t in $(UNIT_BINS); do \
		out=$$(CMOCKA_MESSAGE_OUTPUT=TAP $$t 2>&1); rc=$$?; \
		printf '%s\n' "$$out"; \
		p=$$(printf '%s\n' "$$out" | grep '^ok ' | grep -vc '# SKIP'); \
		f=$$(printf '%s\n' "$$out" | grep -cE '^not ok |^ok .*# SKIP'); \
		if [ $$rc -ne 0 ] && [ $$f -eq 0 ]; then f=1; fi; \
		pass=$$((pass + p)); fail=$$((fail + f)); \
	done; \
	echo "unit$(if $(SANITIZE),-asan): $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

# libFuzzer harnesses: always clang with fuzzer+ASan+UBSan. The sources
# are compiled once with coverage instrumentation (fuzzer-no-link).
UNIT_FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		    -fno-omit-frame-pointer
UNIT_FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 \
		    -I$(UNIT_TOP)/src/common -I$(UNIT_TOP)/src/web \
		    $(UNIT_FUZZ_SAN)
# textrule.c needs the device's devtext.c, which the harnesses do not link.
UNIT_FUZZ_OBJS	:= $(patsubst $(UNIT_TOP)/src/%.c,$(UNIT_OUT)/fuzzobj/%.o, \
		    $(filter-out %/textrule.c,$(UNIT_SRCS)))
UNIT_FUZZ_SRCS	:= $(sort $(wildcard $(UNIT_TOP)/tests/fuzz/fuzz_*.c))
UNIT_FUZZ_BINS	:= $(patsubst $(UNIT_TOP)/tests/fuzz/%.c,$(UNIT_OUT)/fuzz/%, \
		    $(UNIT_FUZZ_SRCS))
UNIT_FUZZ_EACH	= $(shell n=$(words $(UNIT_FUZZ_BINS)); \
		    s=$$(( $(FUZZ_SECONDS) / (n > 0 ? n : 1) )); \
		    [ $$s -lt 1 ] && s=1; echo $$s)

$(UNIT_OUT)/fuzzobj/%.o: $(UNIT_TOP)/src/%.c
	@mkdir -p $(dir $@)
	$(UNIT_FUZZ_CC) $(UNIT_FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP \
	    -c -o $@ $<

$(UNIT_OUT)/fuzz/fuzz_%: $(UNIT_TOP)/tests/fuzz/fuzz_%.c $(UNIT_FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(UNIT_FUZZ_CC) $(UNIT_FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(UNIT_FUZZ_OBJS) -lcrypto -ljansson -lfido2 -lcbor

# Each harness gets an equal share of FUZZ_SECONDS and prints
# "fuzz-NAME: N executions, N crashes"; any crash, leak or sanitizer
# report fails the target and leaves the reproducer in $(UNIT_OUT)/fuzz/.
fuzz-unit: $(UNIT_FUZZ_BINS)
	@for f in $(UNIT_FUZZ_BINS); do \
		n=$$(basename $$f); \
		sh $(UNIT_TOP)/tests/fuzz/run-harness.sh $${n#fuzz_} $$f \
		    $(UNIT_FUZZ_EACH) $(UNIT_OUT)/fuzz/corpus/$$n \
		    $(UNIT_OUT)/fuzz || exit 1; \
	done

# Keep the instrumented objects: they are shared by every harness.
.SECONDARY: $(UNIT_FUZZ_OBJS)

clean-unit:
	rm -rf $(BUILD)/unit

.PHONY: test-unit fuzz-unit clean-unit

-include $(UNIT_OBJS:.o=.d) $(UNIT_BINS:=.d) $(UNIT_FUZZ_OBJS:.o=.d) \
	$(UNIT_FUZZ_BINS:=.d)

.DEFAULT_GOAL	:= $(if $(UNIT_STANDALONE),test-unit,$(UNIT_SAVED_GOAL))
