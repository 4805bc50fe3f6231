# strata -- build, test, run and benchmark.
#
#   make run          install what is missing, build, serve on 127.0.0.1:6379 (data in ./data)
#   make test         install what is missing, build, run every test; ends "N passed, N failed"
#   make bench        profile workload, 100_000 profiles, every engine available
#   make bench-redis  redis-benchmark against strata and redis-server side by side
#   make asan         build/asan/strata-server: every layer under ASan + UBSan
#   make fuzz         every libFuzzer target for FUZZ_SECONDS (default 60) each
#
# BUILD and BINDIR may be overridden (e.g. to build in /tmp while another build runs).

CC      ?= gcc
BUILD   ?= build
BINDIR  ?= src
OPT     ?= -O2
WARN    := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
LUA_INC := -I/usr/include/lua5.1
CFLAGS  := $(OPT) -g -std=gnu11 $(WARN) -D_GNU_SOURCE -pthread -Isrc $(LUA_INC) -MMD -MP $(EXTRA_CFLAGS)
# Lua 5.1 and the cjson and bit modules scripts use (Debian's packages)
LUA_LIBS := -llua5.1-cjson -llua5.1-bitop -llua5.1
LIBS    := $(LUA_LIBS) -lssl -lcrypto -lzstd -lxxhash -lstemmer -lm -lpthread
JEMALLOC := -ljemalloc
BENCH_LIBS := -lhiredis -lrocksdb -lsqlite3 $(shell mariadb_config --libs 2>/dev/null || echo -lmariadb)
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

LAYERS  := engine keyspace index
SRC_engine   := $(wildcard src/engine/*.c)
SRC_keyspace := $(wildcard src/keyspace/*.c)
SRC_index    := $(wildcard src/index/*.c)
SRC_server   := $(filter-out src/server/main.c,$(wildcard src/server/*.c))
SRC_bench    := $(wildcard src/bench/*.c src/bench/*/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
asanobj = $(patsubst %.c,$(BUILD)/asan/%.o,$(1))

# Link order: upper layers first. The server's objects are linked directly, not
# through an archive, because handlers are weak symbols (see server.h) and a
# weak reference does not pull a member out of an archive.
LIB_ALL  := $(call obj,$(SRC_server)) $(BUILD)/libindex.a $(BUILD)/libkeyspace.a $(BUILD)/libengine.a
LIB_ENG  := $(BUILD)/libengine.a
ASAN_LIB_ENG := $(BUILD)/asan/libengine.a
ASAN_LIB_ALL := $(BUILD)/asan/libindex.a $(BUILD)/asan/libkeyspace.a $(ASAN_LIB_ENG)
ASAN_SERVER  := $(BUILD)/asan/strata-server

# Tests: tests/unit/eng_*.c link the engine only (and also run under ASan+UBSan);
# tests/unit/*.c otherwise link every layer.
UNIT_SRC  := $(wildcard tests/unit/*.c)
ENG_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(filter tests/unit/eng_%.c,$(UNIT_SRC)))
ALL_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(filter-out tests/unit/eng_%.c,$(UNIT_SRC)))
ASAN_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests-asan/%,$(filter tests/unit/eng_%.c,$(UNIT_SRC)))
FUZZ_SRC  := $(wildcard tests/fuzz/*.c)
FUZZERS   := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

.PHONY: all deps test run bench bench-redis bench-engine tests asan fuzz clean format
all: $(BINDIR)/strata-server $(BINDIR)/strata-bench $(BINDIR)/strata-check

deps:
	@deps/install.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(ASAN_FLAGS) -c $< -o $@

define layer_lib
$(BUILD)/lib$(1).a: $(call obj,$(SRC_$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach L,$(LAYERS),$(eval $(call layer_lib,$(L))))

define asan_layer_lib
$(BUILD)/asan/lib$(1).a: $(call asanobj,$(SRC_$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach L,$(LAYERS),$(eval $(call asan_layer_lib,$(L))))

$(BINDIR)/strata-server: $(call obj,src/server/main.c) $(LIB_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JEMALLOC)

# strata-check: the offline checker (engine, keyspace and index layers; no server).
$(BINDIR)/strata-check: $(call obj,src/tools/strata-check.c) $(BUILD)/libindex.a $(BUILD)/libkeyspace.a $(LIB_ENG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JEMALLOC)

# make asan: the server with every layer under ASan + UBSan (no jemalloc),
# in its own build dir; tests/run.sh runs the integration tests against it.
$(ASAN_SERVER): $(call asanobj,src/server/main.c $(SRC_server)) $(ASAN_LIB_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(ASAN_FLAGS) -o $@ $^ $(LIBS)

asan: $(ASAN_SERVER)

$(BINDIR)/strata-bench: $(call obj,$(SRC_bench)) $(LIB_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(BENCH_LIBS) $(LIBS) $(JEMALLOC) -lstdc++

$(BUILD)/tests/eng_%: $(call obj,tests/unit/eng_%.c) $(LIB_ENG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JEMALLOC)

$(BUILD)/tests/%: $(call obj,tests/unit/%.c) $(LIB_ALL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS) $(JEMALLOC)

$(BUILD)/tests-asan/%: $(call asanobj,tests/unit/%.c) $(ASAN_LIB_ENG)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -O1 $(ASAN_FLAGS) -o $@ $^ $(LIBS)

# Fuzz targets: clang + libFuzzer + ASan + UBSan. Every layer is compiled once
# into $(BUILD)/fuzzobj (fuzzer-no-link), then each target links against it.
FUZZ_SAN    := -fsanitize=address,undefined
FUZZ_CFLAGS := -O1 -g -std=gnu11 -D_GNU_SOURCE -pthread -Isrc $(LUA_INC) $(FUZZ_SAN)
FUZZ_LIB_SRC := $(SRC_engine) $(SRC_keyspace) $(SRC_index) $(SRC_server)
$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@
# main.c too, with its main() renamed, for server_open_storage (command_fuzz).
$(BUILD)/fuzzobj/server_main.o: src/server/main.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=strata_server_main -MMD -MP -c $< -o $@
$(BUILD)/fuzzobj/libfuzzall.a: $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(FUZZ_LIB_SRC)) $(BUILD)/fuzzobj/server_main.o
	rm -f $@ && ar rcs $@ $^
$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/fuzzobj/libfuzzall.a
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/fuzzobj/libfuzzall.a $(LIBS)

tests: all $(ENG_TESTS) $(ALL_TESTS) $(ASAN_TESTS) $(ASAN_SERVER) $(FUZZERS)

# The build runs NPROC jobs at a time unless make was given its own -j.
NPROC := $(shell nproc 2>/dev/null || echo 2)
JFLAG = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(NPROC))

test: deps
	@$(MAKE) --no-print-directory $(JFLAG) tests
	@BUILD=$(BUILD) BINDIR=$(BINDIR) tests/run.sh

# make fuzz [FUZZ_SECONDS=n]: every libFuzzer target for n seconds (60 by
# default); the corpora grow in $(BUILD)/fuzz-corpus, the seeds are in
# tests/fuzz/corpus/<target>.
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory $(JFLAG) $(FUZZERS)
	@BUILD=$(BUILD) BINDIR=$(BINDIR) FUZZ_SECONDS=$(FUZZ_SECONDS) TEST_FILTER=fuzz/ tests/run.sh

run: deps
	@$(MAKE) --no-print-directory $(BINDIR)/strata-server
	$(BINDIR)/strata-server conf/strata.conf --dir ./data

bench: deps
	@$(MAKE) --no-print-directory all
	$(BINDIR)/strata-bench profiles --profiles 100000 --engine all

bench-engine: deps
	@$(MAKE) --no-print-directory all
	$(BINDIR)/strata-bench engine --num 1000000 --value-size 200 --compare rocksdb

bench-redis: deps
	@$(MAKE) --no-print-directory all
	BINDIR=$(BINDIR) src/bench/bench-redis.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(BINDIR)/strata-server $(BINDIR)/strata-bench $(BINDIR)/strata-check

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
