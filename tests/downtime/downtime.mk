# Downtime suite: pytest tests/downtime against $(BUILD)/bin (the test
# cluster is stopped for real), printing "downtime: N passed, N failed".
# Included by the top-level Makefile.

test-downtime: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=downtime$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh downtime

.PHONY: test-downtime
