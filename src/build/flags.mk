# The flags every program of psd2gate is built with, defined here once:
# psd2gate, psd2ctl, the common library, psd2-deviced, the emulator's
# programs, the device test programs and the build's own tool include
# this file. tests/build/check-hardening.sh reads the built binaries and
# fails when one lacks the hardening. Exempt: the unit tests
# (tests/unit/unit.mk) and the libFuzzer harnesses, built for coverage
# and sanitizers only.
#
#	HARDEN_CFLAGS	position-independent code, stack protector,
#			fortified libc calls (these need -O1 or more)
#	HARDEN_LDFLAGS	a PIE whose relocations are resolved at start
#			(BIND_NOW) and then read-only (RELRO)
#	SAN_FLAGS	ASan and UBSan, when SANITIZE is set and not 0

ifndef HARDEN_CFLAGS
HARDEN_CFLAGS	:= -fPIE -fstack-protector-strong -D_FORTIFY_SOURCE=2
HARDEN_LDFLAGS	:= -pie -Wl,-z,relro,-z,now
FLAGS_COMMA	:= ,
SAN_FLAGS	:= $(if $(filter-out 0,$(SANITIZE)),-fsanitize=address$(FLAGS_COMMA)undefined \
		   -fno-omit-frame-pointer)
endif
