# API and browser suites (pytest against the real service), the top-level
# `make test` and the sanitizer run. Included by the top-level Makefile;
# only T_-prefixed variables are defined here.
#
#	make test-api		pytest tests/api against $(BUILD)/bin
#	make test-browser	headless Chromium against $(BUILD)/bin
#	make test-prod		tests/prod: production.conf started, systemd units
#	make test-ha		metrics, request ids, HAProxy, PostgreSQL restart
#	make test		every suite, each printing its summary line; goes
#				on past a failing suite, fails at the end; the
#				suites share one test PostgreSQL cluster on a
#				free port, stopped however the run ends
#	make test-build		the makefiles read no package flags at parse
#				time, every program has the same hardening,
#				the package sets of deps (tests/build)
#	make sanitize-test	build-asan (ASan+UBSan), then the suites of
#				T_ASAN_SUITES against it
#
# Server logs, JUnit XML and each suite's make output: var/test-logs/.

T_SAVED_GOAL	:= $(.DEFAULT_GOAL)

T_RUN		:= sh tests/run-suite.sh
T_SUFFIX	 = $(if $(SANITIZE),-asan)
T_SUITES	:= test-build test-layout test-unit test-kore test-device \
		   test-migrate test-api test-browser test-ais test-bg test-pis \
		   test-kpi test-tpp-unit test-tpp test-staff test-prod test-ha \
		   test-downtime test-fuzz sanitize-test
T_ASAN_SUITES	:= test-unit test-device test-api test-ais test-bg test-pis \
		   test-kpi test-tpp-unit test-staff test-downtime
T_ASAN_MAKE	 = $(MAKE) --no-print-directory BUILD=build-asan SANITIZE=1

test-api: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=api$(T_SUFFIX) $(T_RUN) api

# Metrics, request ids, instances behind HAProxy, PostgreSQL
# restarts (tests/ha; its listeners from PSD2_HA_PORT on, else free ports).
test-ha: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=ha$(T_SUFFIX) $(T_RUN) ha

# make soak: not part of make test (10 minutes by default; SOAK_SECONDS).
soak: all
	@sh tests/pgcluster.sh run env PSD2_SUITE_LABEL=soak \
	    PSD2_BIN_DIR=$(BUILD)/bin /usr/bin/python3 tests/soak/soak.py

test-browser: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=browser$(T_SUFFIX) \
	    $(T_RUN) browser

# The production configuration started for real, psd2ctl's configuration
# lookup, the systemd units and the metadata documents (tests/prod).
test-prod: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=prod$(T_SUFFIX) \
	    $(T_RUN) prod

# The staff portal: the staff listener, Chromium and the API.
test-staff: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=staff$(T_SUFFIX) \
	    $(T_RUN) staff

# Statements about the source tree that readers rely on.
test-layout:
	@PSD2_SUITE_LABEL=layout $(T_RUN) layout

# psd2ctl migrate on databases of its own in the test cluster.
test-migrate: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=migrate$(T_SUFFIX) \
	    $(T_RUN) migrate

# deps and all must succeed (nothing to test otherwise); after that every
# suite runs even if an earlier one failed, and a recap of the summary
# lines closes the run.
test:
	@$(MAKE) --no-print-directory deps-test
	@$(MAKE) --no-print-directory all
	@sh tests/pgcluster.sh run \
	    sh tests/run-all.sh "$(MAKE) --no-print-directory" $(T_SUITES)

test-build: all device-tests
	@sh tests/build/run.sh

sanitize-test:
	@$(T_ASAN_MAKE) all
	@sh tests/run-all.sh --no-recap "$(T_ASAN_MAKE)" $(T_ASAN_SUITES)

# Every libFuzzer harness briefly (make fuzz runs them longer): the TPP
# parsers about 30 s each, the frame decoder 30 s, the pure C pieces
# 90 s shared. Each harness prints "fuzz-NAME: N executions, N crashes";
# any crash or sanitizer report fails the suite.
test-fuzz:
	@fail=0; \
	for t in "fuzz-tpp FUZZ_SECONDS=30" "fuzz-device FUZZ_SECONDS=30" \
	    "fuzz-unit FUZZ_SECONDS=90"; do \
		$(MAKE) --no-print-directory $$t || fail=1; \
	done; \
	test $$fail -eq 0

.PHONY: soak test test-api test-ha test-browser test-staff test-prod \
	test-layout test-migrate sanitize-test \
	test-fuzz test-build

.DEFAULT_GOAL	:= $(T_SAVED_GOAL)
