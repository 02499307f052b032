# TPP identity: unit tests (cmocka), libFuzzer harnesses and the
# API suite of src/tpp. Included by the top-level Makefile; also usable on
# its own:
#	make -f tests/tpp/tpp.mk test-tpp-unit [SANITIZE=1]
#	make -f tests/tpp/tpp.mk fuzz-tpp [FUZZ_SECONDS=30]
#	make -f Makefile -f tests/tpp/tpp.mk test-tpp
# Only TPP_-prefixed variables are defined here (plus BUILD, SANITIZE,
# FUZZ_SECONDS defaults). The parsers are Kore-independent, so the tests
# link src/tpp and three files of src/common without Kore.

BUILD		?= build
SANITIZE	?=
FUZZ_SECONDS	?= 30

TPP_SAVED_GOAL	:= $(.DEFAULT_GOAL)
TPP_TOP		:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../..)
TPP_OUT		:= $(BUILD)/tpp$(if $(filter 1,$(SANITIZE)),/san)
TPP_PKI		:= $(TPP_OUT)/pki

TPP_CC		?= cc
TPP_FUZZ_CC	?= clang
TPP_CFLAGS	:= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 \
		    -Wmissing-prototypes -I$(TPP_TOP)/src -MMD -MP
TPP_LDFLAGS	:=
TPP_LIBS	:= -lcrypto -ljansson -lcmocka
ifeq ($(SANITIZE),1)
TPP_SANFLAGS	:= -fsanitize=address,undefined -fno-omit-frame-pointer \
		    -fno-sanitize-recover=all
TPP_CFLAGS	+= $(TPP_SANFLAGS)
TPP_LDFLAGS	+= $(TPP_SANFLAGS)
endif

TPP_SRCS	:= $(addprefix $(TPP_TOP)/src/tpp/, digest.c sighdr.c keyid.c \
		    jws.c signature.c cert.c trust.c cache.c verdict.c) \
		    $(addprefix $(TPP_TOP)/src/common/, crypto.c encoding.c \
		    httpdate.c)
TPP_OBJS	:= $(patsubst $(TPP_TOP)/src/%.c,$(TPP_OUT)/obj/%.o,$(TPP_SRCS))
TPP_LIB		:= $(TPP_OUT)/libtpp.a
TPP_TESTS	:= $(sort $(wildcard $(TPP_TOP)/tests/tpp/test_*.c))
TPP_BINS	:= $(patsubst $(TPP_TOP)/tests/tpp/%.c,$(TPP_OUT)/%,$(TPP_TESTS))

$(TPP_OUT)/obj/%.o: $(TPP_TOP)/src/%.c
	@mkdir -p $(dir $@)
	$(TPP_CC) $(TPP_CFLAGS) -c -o $@ $<

$(TPP_LIB): $(TPP_OBJS)
	@rm -f $@
	ar rcs $@ $(TPP_OBJS)

$(TPP_OUT)/test_%: $(TPP_TOP)/tests/tpp/test_%.c $(TPP_TOP)/tests/tpp/tpptest.h \
    $(TPP_LIB)
	@mkdir -p $(dir $@)
	$(TPP_CC) $(TPP_CFLAGS) -o $@ $< $(TPP_LDFLAGS) $(TPP_LIB) $(TPP_LIBS)

# The test PKI the verdict tests read (tests/pki/mint.sh, a CA of its own).
$(TPP_PKI)/.done: $(TPP_TOP)/tests/pki/mint.sh
	@rm -rf $(TPP_PKI)
	sh $(TPP_TOP)/tests/pki/mint.sh test $(TPP_PKI) >/dev/null
	@touch $@

# One closing line: "tpp-unit: N passed, N failed" (cmocka TAP lines).
test-tpp-unit: $(TPP_BINS) $(TPP_PKI)/.done
	@pass=0; fail=0; \
	for t in $(TPP_BINS); do \
		out=$$(TPP_PKI=$(TPP_PKI) CMOCKA_MESSAGE_OUTPUT=TAP $$t 2>&1); \
		rc=$$?; printf '%s\n' "$$out"; \
		p=$$(printf '%s\n' "$$out" | grep '^ok ' | grep -vc '# SKIP'); \
		f=$$(printf '%s\n' "$$out" | grep -cE '^not ok |^ok .*# SKIP'); \
		if [ $$rc -ne 0 ] && [ $$f -eq 0 ]; then f=1; fi; \
		pass=$$((pass + p)); fail=$$((fail + f)); \
	done; \
	echo "tpp-unit$(if $(filter 1,$(SANITIZE)),-asan): $$pass passed, $$fail failed"; \
	[ $$fail -eq 0 ]

# libFuzzer: clang with fuzzer+ASan+UBSan, each harness FUZZ_SECONDS.
TPP_FUZZ_SAN	:= -fsanitize=address,undefined -fno-sanitize-recover=all \
		    -fno-omit-frame-pointer
TPP_FUZZ_CFLAGS	:= -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -g -O1 \
		    -I$(TPP_TOP)/src $(TPP_FUZZ_SAN)
TPP_FUZZ_OBJS	:= $(patsubst $(TPP_TOP)/src/%.c,$(TPP_OUT)/fuzzobj/%.o, \
		    $(TPP_SRCS))
TPP_FUZZ_SRCS	:= $(sort $(wildcard $(TPP_TOP)/tests/tpp/fuzz/fuzz_*.c))
TPP_FUZZ_BINS	:= $(patsubst $(TPP_TOP)/tests/tpp/fuzz/%.c,$(TPP_OUT)/fuzz/%, \
		    $(TPP_FUZZ_SRCS))

$(TPP_OUT)/fuzzobj/%.o: $(TPP_TOP)/src/%.c
	@mkdir -p $(dir $@)
	$(TPP_FUZZ_CC) $(TPP_FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP \
	    -c -o $@ $<

$(TPP_OUT)/fuzz/fuzz_%: $(TPP_TOP)/tests/tpp/fuzz/fuzz_%.c $(TPP_FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(TPP_FUZZ_CC) $(TPP_FUZZ_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	    $(TPP_FUZZ_OBJS) -lcrypto -ljansson

# Seeds: tests/tpp/fuzz/seeds/<harness>/ (kept in git); findings and the
# growing corpus stay under $(TPP_OUT)/fuzz/.
fuzz-tpp: $(TPP_FUZZ_BINS)
	@for f in $(TPP_FUZZ_BINS); do \
		n=$$(basename $$f); c=$(TPP_OUT)/fuzz/corpus/$$n; \
		s=$(TPP_TOP)/tests/tpp/fuzz/seeds/$$n; mkdir -p $$c; \
		[ -d $$s ] && cp -n $$s/* $$c/ 2>/dev/null; \
		sh $(TPP_TOP)/tests/fuzz/run-harness.sh $${n#fuzz_} $$f \
		    $(FUZZ_SECONDS) $$c $(TPP_OUT)/fuzz -max_len=8192 || exit 1; \
	done

.SECONDARY: $(TPP_FUZZ_OBJS)

# API suite (pytest, tests/tpp/test_*.py) against the service; needs the
# binaries of the including Makefile.
test-tpp: $(BUILD)/bin/psd2gate $(BUILD)/bin/psd2ctl
	@PSD2_BIN_DIR=$(BUILD)/bin \
	    PSD2_SUITE_LABEL=tpp$(if $(filter 1,$(SANITIZE)),-asan) \
	    sh $(TPP_TOP)/tests/run-suite.sh tpp

clean-tpp:
	rm -rf $(BUILD)/tpp

.PHONY: test-tpp-unit fuzz-tpp test-tpp clean-tpp

-include $(TPP_OBJS:.o=.d) $(TPP_BINS:=.d) $(TPP_FUZZ_OBJS:.o=.d) \
	$(TPP_FUZZ_BINS:=.d)

.DEFAULT_GOAL	:= $(if $(filter 1,$(words $(MAKEFILE_LIST))),test-tpp-unit,$(TPP_SAVED_GOAL))
