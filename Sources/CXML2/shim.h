// libxml2 built with ICU includes <unicode/ucnv.h> from encoding.h, whose enums clash with the ICU copy inside
// Foundation. Nothing here uses libxml2's ICU converters (only pointers to encoding handlers are in the structures
// Swift reads), so the ICU part of its headers is left out.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlsave.h>

// xmlFree is a global variable holding a function pointer, which Swift imports as a mutable global that strict
// concurrency refuses to read: called through this wrapper instead.
static inline void cimago_xml_free(void *pointer) { xmlFree(pointer); }
