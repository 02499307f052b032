# Payment initiation suite: pytest tests/pis against
# $(BUILD)/bin with psd2-deviced and emulated authenticators under
# umockdev, printing "pis: N passed, N failed".

test-pis: all
	@PSD2_BIN_DIR=$(BUILD)/bin PSD2_SUITE_LABEL=pis$(if $(SANITIZE),-asan) \
	    sh tests/run-suite.sh pis

.PHONY: test-pis
