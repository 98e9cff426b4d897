# lfpoll as a libfabric provider, a module included by the top-level
# Makefile (bindings/*/*.mk; verbs.mk says how modules plug in).
#
# liblfpoll-fi.so: the provider libfabric loads from FI_PROVIDER_PATH (or
# its provider directory, $(libdir)/libfabric/) and selects with
# FI_PROVIDER=lfpoll.  It exports fi_prov_ini only (hidden visibility, a
# version script, no undefined symbols).  Built only when libfabric's
# development files are found; otherwise `make` says so in one line.
# lfpoll/fi_lfpoll.h, the provider's producer extension, is installed with
# lfpoll's headers.  Its tests are in tests/fabric.mk.

FABRIC_DIR  := bindings/libfabric
FABRIC_HDR  := $(FABRIC_DIR)/lfpoll/fi_lfpoll.h
FABRIC_SO   := $(B)/libfabric/liblfpoll-fi.so
FI_CFLAGS   := $(shell $(PKG_CONFIG) --cflags libfabric 2>/dev/null)
FI_LIBS     := $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)
HAVE_FABRIC := $(shell printf '\#include <rdma/providers/fi_prov.h>\n' | \
                 $(CC) $(FI_CFLAGS) -E -x c - >/dev/null 2>&1 && echo yes)
ifeq ($(FI_LIBS),)
  FI_LIBS := -lfabric
endif

ifeq ($(HAVE_FABRIC),yes)

FABRIC_SRCS := $(wildcard $(FABRIC_DIR)/*.c)
FABRIC_OBJS := $(patsubst $(FABRIC_DIR)/%.c,$(B)/libfabric/%.o,$(FABRIC_SRCS))
FABRIC_CFLAGS := -I$(FABRIC_DIR) $(FI_CFLAGS) -fPIC -fvisibility=hidden

$(FABRIC_OBJS): $(B)/libfabric/%.o: $(FABRIC_DIR)/%.c $(FABRIC_DIR)/prov.h \
		$(FABRIC_HDR) $(HEADERS) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(call say,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(FABRIC_CFLAGS) -c $< -o $@

$(FABRIC_SO): $(FABRIC_OBJS) $(FABRIC_DIR)/liblfpoll-fi.map
	$(call say,LD,$@)
	$(Q)$(CC) -shared -Wl,--version-script=$(FABRIC_DIR)/liblfpoll-fi.map \
		-Wl,-z,defs $(FABRIC_OBJS) -o $@ $(LDFLAGS) $(FI_LIBS)

# The extension header alone, as C11 and C++11.
$(B)/compile/fi_lfpoll.c.o: $(FABRIC_HDR) tests/compile/one_header.c
	@mkdir -p $(dir $@)
	$(call say,C11,$<)
	$(Q)$(CC) -std=c11 $(WARN) -I$(FABRIC_DIR) $(FI_CFLAGS) \
		-DLFP_HEADER='<lfpoll/fi_lfpoll.h>' -c tests/compile/one_header.c -o $@

$(B)/compile/fi_lfpoll.cxx.o: $(FABRIC_HDR) tests/compile/one_header.c
	@mkdir -p $(dir $@)
	$(call say,C++11,$<)
	$(Q)$(CXX) -x c++ $(CXXFLAGS) -I$(FABRIC_DIR) $(FI_CFLAGS) \
		-DLFP_HEADER='<lfpoll/fi_lfpoll.h>' -c tests/compile/one_header.c -o $@

# The provider directory libfabric searches under the install's libdir.
fabric_provdir = $(libdir)/libfabric

.PHONY: install-fabric uninstall-fabric
install-fabric: $(FABRIC_SO)
	install -d $(DESTDIR)$(fabric_provdir) $(DESTDIR)$(includedir)/lfpoll
	install -m 755 $(FABRIC_SO) $(DESTDIR)$(fabric_provdir)/
	install -m 644 $(FABRIC_HDR) $(DESTDIR)$(includedir)/lfpoll/

uninstall-fabric:
	rm -f $(DESTDIR)$(fabric_provdir)/liblfpoll-fi.so
	rm -f $(DESTDIR)$(includedir)/lfpoll/fi_lfpoll.h
	rmdir $(DESTDIR)$(fabric_provdir) 2>/dev/null || true

BINDING_ALL       += $(FABRIC_SO)
BINDING_COMPILE   += $(FABRIC_SO) $(B)/compile/fi_lfpoll.c.o $(B)/compile/fi_lfpoll.cxx.o
BINDING_INSTALL   += install-fabric
BINDING_UNINSTALL += uninstall-fabric

else

.PHONY: fabric-missing
fabric-missing:
	@echo "lfpoll: libfabric development files not found (Debian: libfabric-dev): the libfabric provider is not built"

BINDING_ALL += fabric-missing

endif
