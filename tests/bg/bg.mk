# Berlin Group suite: pytest tests/bg against $(BUILD)/bin, printing
# "bg: N passed, N failed". Included by the top-level Makefile.

test-bg: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=bg$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh bg

.PHONY: test-bg
