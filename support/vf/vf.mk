# The device-free verbs context (vf.c, vf.h) as an installed test kit for
# users' verbs code, included by the top-level Makefile as a module (the
# BINDING_* lists described there). It builds and installs
#
#   liblfpoll_vf.a          vf.c, position independent
#   <lfpoll/vf.h>           vf.h
#   lfpoll-vf.pc            its flags: the link flags below, -libverbs, -ldl
#   lfpoll-vf.cmake         the CMake component lfpoll::vf (cmake/)
#   examples/vf_*.c         a user's test of a completion loop (built by all)
#
# Static only, on purpose: the read(), close() and ibv_get_device_list()
# that vf.c defines must come before libc's and libibverbs' for every
# caller, libibverbs.so's own calls included.  (Its poll() serves the
# executable's own calls only, and is not exported: libibverbs polls none
# of the kit's fds.) Linked from an archive they
# are the executable's own, which the dynamic linker searches first, whatever
# the link order. As a shared library they would be searched in the order of
# the executable's DT_NEEDED entries, and a program linked with -libverbs
# before -llfpoll_vf would call the real ibv_get_device_list
# (tests/install/vf_interpose.c shows both). VF_LDFLAGS exports the three
# from the executable by name, rather than relying on the linker exporting
# a definition because a shared library on the link line uses it.

VF_DIR      := support/vf
VF_A        := $(B)/liblfpoll_vf.a
VF_OBJ      := $(B)/vf/vf.o
VF_HDR      := $(VF_DIR)/vf.h
# <lfpoll/vf.h> as users include it, for the examples built here.
VF_INCLUDE  := $(B)/vf/include
VF_EXPORTS  := read close ibv_get_device_list
VF_COMMA    := ,
VF_LDFLAGS  := -Wl$(subst $(eval) ,,$(foreach s,$(VF_EXPORTS),$(VF_COMMA)--export-dynamic-symbol=$(s)))
VF_LDLIBS   := -libverbs -ldl
VF_CMAKE    := $(B)/cmake/lfpoll-vf.cmake
VF_EXAMPLES := $(filter $(B)/examples/vf_%,$(EXAMPLES))
VF_MISSING  := $(call lfp_missing,libibverbs-dev)
SUBST       += VF_A=$(notdir $(VF_A)) VF_LDFLAGS=$(VF_LDFLAGS) \
               VF_LINK_OPTIONS=$(patsubst -Wl$(VF_COMMA)%,LINKER:%,$(VF_LDFLAGS))

$(VF_OBJ): $(VF_DIR)/vf.c $(VF_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c $< -o $@

$(VF_A): $(VF_OBJ)
	$(call say,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(VF_INCLUDE)/lfpoll/vf.h: $(VF_HDR)
	@mkdir -p $(dir $@)
	$(Q)cp $< $@

# Its header alone, as C11 and C++11.
$(B)/compile/vf.c.o: $(VF_HDR) tests/compile/one_header.c
	@mkdir -p $(dir $@)
	$(call say,C11,$<)
	$(Q)$(CC) $(STD_C) $(WARN) -I$(VF_DIR) -DLFP_HEADER='"vf.h"' \
		-c tests/compile/one_header.c -o $@

$(B)/compile/vf.cxx.o: $(VF_HDR) tests/compile/one_header.c
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -I$(VF_DIR) -DLFP_HEADER='"vf.h"' \
		-c tests/compile/one_header.c -o $@

# The examples named vf_* are tests written against the kit and the binding.
$(VF_EXAMPLES): $(B)/examples/vf_%: examples/vf_%.c $(VF_A) $(VF_INCLUDE)/lfpoll/vf.h \
		$(VERBS_A) $(VERBS_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(VERBS_DIR) -I$(VF_INCLUDE) $< -o $@ $(LDFLAGS) \
		$(VERBS_A) $(VF_A) $(VF_LDFLAGS) $(VF_LDLIBS)

.PHONY: install-vf uninstall-vf vf-skipped
install-vf: $(VF_A) $(B)/lfpoll-vf.pc $(VF_CMAKE)
	install -d $(DESTDIR)$(includedir)/lfpoll $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(libdir) \
		$(DESTDIR)$(cmakedir)
	install -m 644 $(VF_HDR) $(DESTDIR)$(includedir)/lfpoll/
	install -m 644 $(VF_A) $(DESTDIR)$(libdir)/
	install -m 644 $(B)/lfpoll-vf.pc $(DESTDIR)$(pkgconfigdir)/
	install -m 644 $(VF_CMAKE) $(DESTDIR)$(cmakedir)/

uninstall-vf:
	rm -f $(DESTDIR)$(includedir)/lfpoll/vf.h
	rm -f $(DESTDIR)$(libdir)/$(notdir $(VF_A))
	rm -f $(DESTDIR)$(pkgconfigdir)/lfpoll-vf.pc
	rm -f $(DESTDIR)$(cmakedir)/$(notdir $(VF_CMAKE))

vf-skipped:
	@echo "lfpoll: skipping the verbs test kit (liblfpoll_vf): $(VF_MISSING) missing (install it, then make again)"

BINDING_EXAMPLES  += $(VF_EXAMPLES)
BINDING_UNINSTALL += uninstall-vf
ifeq ($(VF_MISSING),)
BINDING_ALL       += $(B)/lfpoll-vf.pc $(VF_CMAKE) $(VF_A) $(VF_EXAMPLES)
BINDING_COMPILE   += $(B)/compile/vf.c.o $(B)/compile/vf.cxx.o $(VF_A)
BINDING_INSTALL   += install-vf
else
BINDING_ALL       += vf-skipped
BINDING_INSTALL   += vf-skipped
endif
