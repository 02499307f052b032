/* libFuzzer: the QCStatements DER decoder (ETSI TS 119 495 PSD2 type). */
#include <stddef.h>
#include <stdint.h>

#include "tpp/cert.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct tpp_qc	qc;

	(void)tpp_qc_parse(data, len, &qc);
	return (0);
}
