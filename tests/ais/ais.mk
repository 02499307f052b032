# AIS suite: pytest tests/ais against $(BUILD)/bin, printing
# "ais: N passed, N failed". Include from the top-level Makefile:
#	-include tests/ais/ais.mk
# PSD2_TEST_PORT moves the test instance off 18080 (see tests/lib).

test-ais: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=ais$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh ais

.PHONY: test-ais
