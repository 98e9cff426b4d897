# The libibverbs binding as a module, included by the top-level Makefile
# (bindings/*/*.mk). A binding adds its targets to the lists the top
# Makefile builds and installs (BINDING_ALL, BINDING_COMPILE,
# BINDING_INSTALL, BINDING_UNINSTALL, BINDING_EXAMPLES: described where the
# Makefile includes the modules) and writes its rules in its own folder's
# terms. When its dependency is missing it adds a one-line note instead.
# The only compiled part of the verbs binding: hidden visibility, an
# explicit version script, no undefined symbols (-z defs), SONAME
# liblfpoll_verbs.so.0. It installs liblfpoll_verbs.so and .a, lfpoll/verbs.h,
# lfpoll-verbs.pc and the CMake component lfpoll::verbs (cmake/).

VERBS_DIR    := bindings/verbs
VERBS_SONAME := liblfpoll_verbs.so.0
VERBS_SO     := $(B)/liblfpoll_verbs.so.$(VERSION)
VERBS_A      := $(B)/liblfpoll_verbs.a
VERBS_HDR    := $(VERBS_DIR)/lfpoll/verbs.h
VERBS_CFLAGS := -I$(VERBS_DIR) -fPIC -fvisibility=hidden
VERBS_SRCS   := $(wildcard $(VERBS_DIR)/*.c)
VERBS_OBJS   := $(patsubst $(VERBS_DIR)/%.c,$(B)/verbs/%.o,$(VERBS_SRCS))
VERBS_EXAMPLES := $(filter $(B)/examples/verbs_%,$(EXAMPLES))
VERBS_CMAKE  := $(B)/cmake/lfpoll-verbs.cmake
# Only libibverbs' headers and library: ibverbs-providers is for the tests.
VERBS_MISSING := $(call lfp_missing,libibverbs-dev)
SUBST        += VERBS_SO=$(notdir $(VERBS_SO)) VERBS_SONAME=$(VERBS_SONAME)

$(VERBS_OBJS): $(B)/verbs/%.o: $(VERBS_DIR)/%.c $(wildcard $(VERBS_DIR)/*.h) \
		$(VERBS_HDR) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(VERBS_CFLAGS) -c $< -o $@

$(VERBS_SO): $(VERBS_OBJS) $(VERBS_DIR)/liblfpoll_verbs.map
	$(call say,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,$(VERBS_SONAME) \
		-Wl,--version-script=$(VERBS_DIR)/liblfpoll_verbs.map -Wl,-z,defs \
		$(VERBS_OBJS) -o $@ $(LDFLAGS) -libverbs
	$(Q)ln -sf $(notdir $@) $(B)/$(VERBS_SONAME)
	$(Q)ln -sf $(notdir $@) $(B)/liblfpoll_verbs.so

$(VERBS_A): $(VERBS_OBJS)
	$(call say,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# Its public header alone, as C11 and C++11.
$(B)/compile/verbs.c.o: $(VERBS_HDR) tests/compile/one_header.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C11,$<)
	$(Q)$(CC) $(STD_C) $(WARN) -Iinclude -I$(VERBS_DIR) $(CK_CFLAGS) \
		-DLFP_HEADER='<lfpoll/verbs.h>' -c tests/compile/one_header.c -o $@

$(B)/compile/verbs.cxx.o: $(VERBS_HDR) tests/compile/one_header.c $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -I$(VERBS_DIR) -DLFP_HEADER='<lfpoll/verbs.h>' \
		-c tests/compile/one_header.c -o $@

# The examples named verbs_* link the binding.
$(VERBS_EXAMPLES): $(B)/examples/verbs_%: examples/verbs_%.c $(VERBS_A) $(VERBS_HDR)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) -I$(VERBS_DIR) $< -o $@ $(LDFLAGS) $(VERBS_A) -libverbs

.PHONY: install-verbs uninstall-verbs verbs-skipped
install-verbs: $(VERBS_SO) $(VERBS_A) $(B)/lfpoll-verbs.pc $(VERBS_CMAKE)
	install -d $(DESTDIR)$(includedir)/lfpoll $(DESTDIR)$(pkgconfigdir) $(DESTDIR)$(libdir) \
		$(DESTDIR)$(cmakedir)
	install -m 644 $(VERBS_HDR) $(DESTDIR)$(includedir)/lfpoll/
	install -m 644 $(B)/lfpoll-verbs.pc $(DESTDIR)$(pkgconfigdir)/
	install -m 644 $(VERBS_CMAKE) $(DESTDIR)$(cmakedir)/
	install -m 755 $(VERBS_SO) $(DESTDIR)$(libdir)/
	ln -sf $(notdir $(VERBS_SO)) $(DESTDIR)$(libdir)/$(VERBS_SONAME)
	ln -sf $(notdir $(VERBS_SO)) $(DESTDIR)$(libdir)/liblfpoll_verbs.so
	install -m 644 $(VERBS_A) $(DESTDIR)$(libdir)/

uninstall-verbs:
	rm -f $(DESTDIR)$(includedir)/lfpoll/verbs.h
	rm -f $(DESTDIR)$(pkgconfigdir)/lfpoll-verbs.pc
	rm -f $(DESTDIR)$(cmakedir)/$(notdir $(VERBS_CMAKE))
	rm -f $(DESTDIR)$(libdir)/liblfpoll_verbs.*

verbs-skipped:
	@echo "lfpoll: skipping the verbs binding: $(VERBS_MISSING) missing (install it, then make again)"

BINDING_EXAMPLES  += $(VERBS_EXAMPLES)
BINDING_UNINSTALL += uninstall-verbs
ifeq ($(VERBS_MISSING),)
BINDING_ALL       += $(B)/lfpoll-verbs.pc $(VERBS_CMAKE) $(VERBS_SO) $(VERBS_A) $(VERBS_EXAMPLES)
BINDING_COMPILE   += $(B)/compile/verbs.c.o $(B)/compile/verbs.cxx.o $(VERBS_SO) $(VERBS_A)
BINDING_INSTALL   += install-verbs
else
BINDING_ALL       += verbs-skipped
BINDING_INSTALL   += verbs-skipped
endif
