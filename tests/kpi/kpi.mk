# KPI suite: pytest tests/kpi against $(BUILD)/bin, printing
# "kpi: N passed, N failed". Included by the top-level Makefile.

test-kpi: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=kpi$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh kpi

.PHONY: test-kpi
