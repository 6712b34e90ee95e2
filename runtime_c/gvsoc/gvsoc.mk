# deeploy-mlir: build a program for GVSoC (pulp-open or siracusa) with Debian's
# riscv64-unknown-elf-gcc (RV32IMFC, hard float, picolibc; or clang-19 for
# Zfinx, GVSOC_ISA=zfinx), pulp-runtime's
# crt0/init/link script and deeploy-mlir's PMSIS layer (runtime/gvsoc).
#
#   make -f runtime/gvsoc/gvsoc.mk APP_SRCS="a.c b.c" OUT=build/gvsoc/prog.elf \
#        PULP_RUNTIME_HOME=/path/to/pulp-runtime GVSOC_TARGET=siracusa
#
# GVSOC_TARGET sets the memory sizes of the GVSoC model: L2 up to
# 0x1C200000 (siracusa) or 0x1C190000 (pulp-open), L1 256 KiB (siracusa) or
# 64 KiB (pulp-open). CLUSTER_STACK_SIZE is each cluster core's boot stack
# (bytes, at the top of L1), which holds only the dispatch loop: a task runs on
# the stacks its pi_cluster_task asks for (stack_size, slave_stack_size),
# taken from the L1 heap when it is sent, as in PULPOS.
GVSOC_TARGET ?= siracusa
APP_SRCS ?=
APP_INCS ?=
APP_DEFS ?=
OUT ?= build/gvsoc/prog.elf
GVSOC_RT ?= $(dir $(lastword $(MAKEFILE_LIST)))
RV32_CC ?= riscv64-unknown-elf-gcc
NUM_CORES ?= 8
CLUSTER_STACK_SIZE ?= 0x80

ifeq ($(GVSOC_TARGET),siracusa)
GVSOC_L2_END ?= 0x1C200000
GVSOC_L1_SIZE ?= 0x40000
HYPER_DEFS := -DDM_HYPER_PERIPH=4 -DDM_HYPER_NB_CHANNELS=2
else ifeq ($(GVSOC_TARGET),pulp-open)
GVSOC_L2_END ?= 0x1C190000
GVSOC_L1_SIZE ?= 0x10000
HYPER_DEFS := -DDM_HYPER_PERIPH=8 -DDM_HYPER_NB_CHANNELS=8
else
$(error GVSOC_TARGET must be siracusa or pulp-open, not '$(GVSOC_TARGET)')
endif

ifeq ($(PULP_RUNTIME_HOME),)
$(error PULP_RUNTIME_HOME is not set: the pulp-runtime directory (see scripts/install-gvsoc.sh))
endif
PR := $(PULP_RUNTIME_HOME)

OBJDIR := $(dir $(OUT))obj
# GVSOC_ISA: f (default) is Debian's gcc for RV32IMFC with the f registers, for
# ../shared/gvsoc (built with the separate f register file); zfinx is clang-19
# for RV32IMC_Zfinx (floats in the x registers, as the Siracusa cluster cores
# and pulp-sdk's -march=rv32imc_zfinx_xpulpv3), for the GVSoC that
# scripts/build-gvsoc-zfinx.sh builds. gcc 12 links either (picolibc's
# rv32imac/ilp32 multilib is the Zfinx ABI's).
GVSOC_ISA ?= f
ifeq ($(GVSOC_ISA),zfinx)
ZFINX_CC ?= clang-19
PICOLIBC_INC ?= /usr/lib/picolibc/riscv64-unknown-elf/include
CC_C := $(ZFINX_CC)
ARCH := --target=riscv32-unknown-elf -march=rv32imc_zfinx -mabi=ilp32 -isystem $(PICOLIBC_INC) -fno-math-errno
LINK_ARCH := -march=rv32imac -mabi=ilp32 --specs=picolibc.specs
# -fno-math-errno: without it clang-19 calls libm's soft-float fmaf for Zfinx
# (with F it inlines fmadd.s); fmaf and sqrtf never set errno: the same bits
# pulp-runtime's own boot and FC code (no float in it) stays gcc's: built by
# clang-19 the program prints nothing on GVSoC (measured), with gcc it runs
PR_CC := $(RV32_CC)
PR_ARCH := -march=rv32imac_zicsr -mabi=ilp32 --specs=picolibc.specs -fno-tree-loop-distribute-patterns
GCC_ONLY :=
else ifeq ($(GVSOC_ISA),f-clang)
# clang-19 with the f registers (RV32IMFC, ilp32f) on ../shared/gvsoc: the
# compiler's share of the difference between f and zfinx (bench/gvsoc.py)
ZFINX_CC ?= clang-19
PICOLIBC_INC ?= /usr/lib/picolibc/riscv64-unknown-elf/include
CC_C := $(ZFINX_CC)
ARCH := --target=riscv32-unknown-elf -march=rv32imfc -mabi=ilp32f -isystem $(PICOLIBC_INC) -fno-math-errno
LINK_ARCH := -march=rv32imfc -mabi=ilp32f --specs=picolibc.specs
PR_CC := $(RV32_CC)
PR_ARCH := $(LINK_ARCH) -fno-tree-loop-distribute-patterns
GCC_ONLY :=
else ifeq ($(GVSOC_ISA),f)
CC_C := $(RV32_CC)
ARCH := -march=rv32imfc -mabi=ilp32f --specs=picolibc.specs
LINK_ARCH := $(ARCH)
PR_CC := $(RV32_CC)
PR_ARCH := $(ARCH)
GCC_ONLY := -fno-tree-loop-distribute-patterns
else
$(error GVSOC_ISA must be f, zfinx or f-clang, not '$(GVSOC_ISA)')
endif
# the runtime's own code: pulp-runtime's headers and defines
PR_FLAGS := -O2 -std=gnu11 -DRV_ISA_RV32 -D__riscv__ -fdata-sections -ffunction-sections \
	-include chips/pulp/config.h -I$(GVSOC_RT)shim -I$(PR)/include/chips/pulp -I$(PR)/include -I$(PR)/kernel \
	-fno-jump-tables $(GCC_ONLY) -D__PLATFORM__=ARCHI_PLATFORM_GVSOC \
	-DCONFIG_IO_UART=0 -DCLUSTER_STACK_SIZE=$(CLUSTER_STACK_SIZE) -DNUM_CORES=$(NUM_CORES)
PR_SRCS := kernel/fll-v1.c kernel/freq-domains.c kernel/chips/pulp/soc.c kernel/init.c \
	kernel/irq.c kernel/soc_event.c kernel/crt0.S kernel/irq_asm.S
# the application (emitted code, kernels): the project's language and warning
# flags (-ffp-contract=off as every build of the emitted code, the host's and
# the SDK's: no multiply-add contracted, so GVSoC gives the host's bits; a
# later flag in APP_DEFS overrides it)
# DM_L3_INIT_SECTION: the initial values of tensors whose home is L3 go to
# .dm_l3_init (the emitted data.h), which the link script below places in L2
# at the start of the L2 heap (loaded with the program, then overwritten by
# the arena once the harness has written them to L3)
APP_FLAGS := -O2 -std=gnu11 -ffp-contract=off -Wall -Wextra -Werror -fdata-sections -ffunction-sections \
	-I$(GVSOC_RT) $(APP_INCS) -DNUM_CORES=$(NUM_CORES) -DDM_L3_INIT_SECTION $(APP_DEFS)

PR_OBJS := $(addprefix $(OBJDIR)/pr/,$(addsuffix .o,$(basename $(PR_SRCS))))
APP_OBJS := $(addprefix $(OBJDIR)/app/,$(addsuffix .o,$(basename $(APP_SRCS)))) \
	$(OBJDIR)/rt/pmsis_gvsoc.o $(OBJDIR)/rt/ram_gvsoc.o

.PHONY: all
all: $(OUT)

$(OBJDIR)/pr/%.o: $(PR)/%.c
	@mkdir -p $(dir $@)
	$(PR_CC) $(PR_ARCH) $(PR_FLAGS) -c $< -o $@

$(OBJDIR)/pr/%.o: $(PR)/%.S
	@mkdir -p $(dir $@)
	$(PR_CC) $(PR_ARCH) $(PR_FLAGS) -DLANGUAGE_ASSEMBLY -c $< -o $@

$(OBJDIR)/rt/pmsis_gvsoc.o: $(GVSOC_RT)pmsis_gvsoc.c $(GVSOC_RT)pmsis.h
	@mkdir -p $(dir $@)
	$(CC_C) $(ARCH) $(subst -I$(PR),-isystem $(PR),$(PR_FLAGS)) -Wall -Wextra -Werror -Wno-unused-function \
		-I$(GVSOC_RT) -c $< -o $@

# L3 RAM (HyperRAM over the uDMA): plain C, the application's flags
$(OBJDIR)/rt/ram_gvsoc.o: $(GVSOC_RT)ram_gvsoc.c $(GVSOC_RT)pmsis.h $(GVSOC_RT)bsp/ram.h
	@mkdir -p $(dir $@)
	$(CC_C) $(ARCH) $(APP_FLAGS) $(HYPER_DEFS) -c $< -o $@

$(OBJDIR)/app/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC_C) $(ARCH) $(APP_FLAGS) -c $< -o $@

# pulp-runtime's link script with the memory lengths of the GVSoC target, and
# .dm_l3_init (the L3 homes' initial values) after .l2_data, inside the L2
# heap (__dm_l2_heap_start is the end of .l2_data): L2 they use only until
# the harness has written them to L3
$(OBJDIR)/link.ld: $(PR)/kernel/chips/pulp/link.ld
	@mkdir -p $(dir $@)
	sed -e 's/\(L2 *: *ORIGIN = 0x1c000004, LENGTH = \)0x0007fffc/\1$(GVSOC_L2_END) - 0x1c000004/' \
	    -e 's/\(L1 *: *ORIGIN = 0x10000004, LENGTH = \)0x0000fffc/\1$(GVSOC_L1_SIZE) - 4/' \
	    -e 's/^\( *\)\.l1cluster_g : {/\1.dm_l3_init ALIGN(8) : { *(.dm_l3_init) *(.dm_l3_init.*) } > L2\n\n&/' \
	    -e 's/^\( *\)__l2_shared_end = .*/&\n\1__dm_l2_heap_start = ADDR(.l2_data) + SIZEOF(.l2_data);/' $< > $@
	grep -q '$(GVSOC_L2_END)' $@ && grep -q '$(GVSOC_L1_SIZE)' $@ && grep -q __dm_l2_heap_start $@ \
		&& grep -q '^ *\.dm_l3_init ALIGN' $@ \
		|| { echo "error: $<: unexpected memory layout" >&2; exit 1; }

$(OUT): $(PR_OBJS) $(APP_OBJS) $(OBJDIR)/link.ld
	$(RV32_CC) $(LINK_ARCH) -nostartfiles -Wl,--gc-sections -T $(OBJDIR)/link.ld \
		-Wl,--defsym=__dm_l2_end=$(GVSOC_L2_END) $(APP_OBJS) $(PR_OBJS) -o $@ -lm -lc -lgcc
