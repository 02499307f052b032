# psd2gate device module: psd2-deviced, the emulated authenticator and
# their tests. Included by the top-level Makefile; also usable alone:
#   make -f device/device.mk BUILD=build device-all test-device fuzz-device
# (device-all: the programs; device-tests: the cmocka test programs)
# Own variables are prefixed DEV_.

BUILD		?= build
SANITIZE	?= 0
FUZZ_SECONDS	?= 30

CC		?= cc
DEV_CC		?= $(CC)
DEV_CLANG	?= clang
DEV_OBJ		:= $(BUILD)/device
DEV_BIN		:= $(BUILD)/bin
# The common library (with the authenticator's formats) and the flags of
# every program: src/common/common.mk, src/build/flags.mk.
include src/common/common.mk

# Package flags are read by the shell when a recipe runs, not when make
# reads this file (before `make deps` could install the packages).
DEV_CFLAGS	:= -std=c11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE \
		   $(HARDEN_CFLAGS) $(SAN_FLAGS) -Idevice -Isrc/common -Isrc \
		   -Isrc/ctl -I$$(pg_config --includedir)
DEV_LDFLAGS	:= $(HARDEN_LDFLAGS) $(SAN_FLAGS)

DEV_EMU_PKGS	:= umockdev-1.0 glib-2.0 gobject-2.0 gio-2.0
DEV_USB_CFLAGS	:= $$(pkg-config --cflags libusb-1.0)
DEV_USB_LIBS	:= $$(pkg-config --libs libusb-1.0)
DEV_EMU_CFLAGS	:= $$(pkg-config --cflags $(DEV_EMU_PKGS))
DEV_EMU_LIBS	:= $$(pkg-config --libs $(DEV_EMU_PKGS))
DEV_SSL_LIBS	:= -lcrypto
DEV_PQ_LIBS	:= -lpq
DEV_CMOCKA_LIBS	:= -lcmocka

DEV_DAEMON_SRC	:= device/deviced.c device/deviced_usb.c device/deviced_db.c \
		   device/deviced_metrics.c device/deviced_log.c \
		   device/deviced_queue.c device/devusb.c
DEV_EMU_SRC	:= device/emu/usbemu.c device/emu/firmware.c

# The formats, the currency table and the readers (frames, signatures,
# payee names, IBANs, settings) come from the common library.
DEV_COMMON_LIB	:= $(COMMON_LIB)
DEV_DAEMON_OBJ	:= $(DEV_DAEMON_SRC:%.c=$(DEV_OBJ)/%.o)
DEV_EMU_OBJ	:= $(DEV_EMU_SRC:%.c=$(DEV_OBJ)/%.o)
DEV_USB_OBJ	:= $(DEV_OBJ)/device/devusb.o
DEV_CTL_OBJ	:= $(DEV_OBJ)/src/ctl/ctl_device.o $(DEV_OBJ)/src/ctl/ctl_actor.o

DEV_TESTS	:= $(DEV_OBJ)/tests/test_frame $(DEV_OBJ)/tests/test_sig \
		   $(DEV_OBJ)/tests/test_usb $(DEV_OBJ)/tests/test_e2e
DEV_PROGS	:= $(DEV_BIN)/psd2-deviced $(DEV_BIN)/psd2-emu \
		   $(DEV_BIN)/psd2-emuhost

.PHONY: device-all device-tests test-device fuzz-device bench-device

# A change of the flags rebuilds every object (and so every program).
$(DEV_DAEMON_OBJ) $(DEV_EMU_OBJ) $(DEV_CTL_OBJ) \
    $(DEV_OBJ)/device/emu/psd2-emu.o $(DEV_OBJ)/device/emu/emuhost.o \
    $(DEV_TESTS:=.o) $(DEV_OBJ)/tests/devtest.o: src/build/flags.mk

# The programs (make all, make run); the test programs link cmocka, a
# test tool, so only the test targets build them.
device-all: $(DEV_PROGS)

device-tests: $(DEV_TESTS)

$(DEV_OBJ)/device/emu/%.o: device/emu/%.c device/emu/*.h device/*.h src/common/*.h
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_CFLAGS) $(DEV_EMU_CFLAGS) -c $< -o $@

$(DEV_OBJ)/device/%.o: device/%.c device/*.h src/common/*.h
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_CFLAGS) $(DEV_USB_CFLAGS) -c $< -o $@

$(DEV_OBJ)/src/%.o: src/%.c src/common/*.h device/*.h
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_CFLAGS) -c $< -o $@

$(DEV_OBJ)/tests/%.o: tests/device/%.c tests/device/*.h device/*.h device/emu/*.h \
		src/common/*.h
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_CFLAGS) -Idevice/emu $(DEV_USB_CFLAGS) $(DEV_EMU_CFLAGS) -c $< -o $@

$(DEV_BIN)/psd2-deviced: $(DEV_DAEMON_OBJ) $(DEV_COMMON_LIB)
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_USB_LIBS) $(DEV_PQ_LIBS) $(DEV_SSL_LIBS) -lpthread

$(DEV_BIN)/psd2-emu: $(DEV_OBJ)/device/emu/psd2-emu.o
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^

$(DEV_BIN)/psd2-emuhost: $(DEV_OBJ)/device/emu/emuhost.o $(DEV_EMU_OBJ) $(DEV_COMMON_LIB)
	@mkdir -p $(dir $@)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_EMU_LIBS) $(DEV_SSL_LIBS) -lpthread

$(DEV_OBJ)/tests/test_frame: $(DEV_OBJ)/tests/test_frame.o $(DEV_COMMON_LIB)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_CMOCKA_LIBS) $(DEV_SSL_LIBS)

$(DEV_OBJ)/tests/test_sig: $(DEV_OBJ)/tests/test_sig.o $(DEV_COMMON_LIB)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_CMOCKA_LIBS) $(DEV_SSL_LIBS)

$(DEV_OBJ)/tests/test_usb: $(DEV_OBJ)/tests/test_usb.o $(DEV_OBJ)/tests/devtest.o \
		$(DEV_EMU_OBJ) $(DEV_USB_OBJ) $(DEV_COMMON_LIB)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_CMOCKA_LIBS) $(DEV_EMU_LIBS) \
	    $(DEV_USB_LIBS) $(DEV_SSL_LIBS) -lpthread

$(DEV_OBJ)/tests/test_e2e: $(DEV_OBJ)/tests/test_e2e.o $(DEV_OBJ)/tests/devtest.o \
		$(DEV_EMU_OBJ) $(DEV_CTL_OBJ) $(DEV_COMMON_LIB)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_CMOCKA_LIBS) $(DEV_EMU_LIBS) \
	    $(DEV_PQ_LIBS) $(DEV_SSL_LIBS) -lpthread

$(DEV_OBJ)/tests/bench_device: $(DEV_OBJ)/tests/bench_device.o $(DEV_OBJ)/tests/devtest.o \
		$(DEV_EMU_OBJ) $(DEV_COMMON_LIB)
	$(DEV_CC) $(DEV_LDFLAGS) -o $@ $^ $(DEV_EMU_LIBS) $(DEV_PQ_LIBS) \
	    $(DEV_SSL_LIBS) -lpthread

test-device: device-all device-tests
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/pgcluster.sh run \
	    sh tests/device/run.sh

# libFuzzer harness of the frame and payload decoders.
DEV_FUZZ_SRC	:= $(addprefix src/common/,devframe.c devtext.c iban.c devcur.c \
		   money.c)
$(DEV_OBJ)/fuzz/device_frame_fuzz: tests/fuzz/device_frame_fuzz.c $(DEV_FUZZ_SRC) \
		src/common/*.h src/common/devtext_tables.inc
	@mkdir -p $(dir $@)
	$(DEV_CLANG) -std=c11 -g -O1 -D_GNU_SOURCE -Isrc/common \
	    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	    -o $@ tests/fuzz/device_frame_fuzz.c $(DEV_FUZZ_SRC)

fuzz-device: $(DEV_OBJ)/fuzz/device_frame_fuzz
	@mkdir -p $(DEV_OBJ)/fuzz/corpus
	@grep -v '^#' tests/device/frame_seeds.txt | while read -r hex; do \
		printf '%s' "$$hex" | /usr/bin/python3 -c 'import sys; \
		d = bytes.fromhex(sys.stdin.read()); \
		open(sys.argv[1] + "/seed-" + d[:6].hex(), "wb").write(d)' \
		$(DEV_OBJ)/fuzz/corpus; done
	@sh tests/fuzz/run-harness.sh device_frame $(DEV_OBJ)/fuzz/device_frame_fuzz \
	    $(FUZZ_SECONDS) $(DEV_OBJ)/fuzz/corpus $(DEV_OBJ)/fuzz -max_len=1100

bench-device: device-all device-tests $(DEV_OBJ)/tests/bench_device
	@BUILD=$(BUILD) sh tests/device/bench.sh
