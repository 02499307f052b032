# The common library, $(BUILD)/lib/libpsd2common.a: plain C below every
# program (configuration, key rings, crypto, encodings, money and the
# authenticator's formats: frames, signed encodings, payee names,
# currencies, enrolment, IBANs). psd2gate, psd2ctl, psd2-deviced and the
# emulator link the one archive, so each gets the same objects built with
# the same flags (src/build/flags.mk). Included by the top-level Makefile
# and by device/device.mk (which also works alone); only COMMON_-prefixed
# variables are defined here.

ifndef COMMON_LIB
include src/build/flags.mk

BUILD		?= build
COMMON_LIB	:= $(BUILD)/lib/libpsd2common.a
COMMON_LIB_SRC	:= $(sort $(wildcard src/common/*.c))
COMMON_LIB_OBJ	:= $(COMMON_LIB_SRC:src/common/%.c=$(BUILD)/obj/common/%.o)
COMMON_CFLAGS	:= -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror \
		   -Wstrict-prototypes -Wmissing-prototypes -Wshadow \
		   -Wpointer-arith $(HARDEN_CFLAGS) $(SAN_FLAGS) -MMD -MP -Isrc
$(BUILD)/obj/common/%.o: src/common/%.c
	@mkdir -p $(dir $@)
	$(CC) $(COMMON_CFLAGS) -c $< -o $@

$(COMMON_LIB_OBJ): src/build/flags.mk

$(COMMON_LIB): $(COMMON_LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $(COMMON_LIB_OBJ)

-include $(COMMON_LIB_OBJ:.o=.d)
endif
