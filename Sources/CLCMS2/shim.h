#include <lcms2.h>

// lcms2's pixel-format and flag macros are composite (COLORSPACE_SH(...)|CHANNELS_SH(...)|...), which Swift does
// not import: re-exported here as constants.
static const cmsUInt32Number cimago_lcms_type_rgba_8 = TYPE_RGBA_8;
static const cmsUInt32Number cimago_lcms_type_gray_8 = TYPE_GRAY_8;
static const cmsUInt32Number cimago_lcms_type_cmyk_8 = TYPE_CMYK_8;
static const cmsUInt32Number cimago_lcms_type_cmyk_8_rev = TYPE_CMYK_8_REV;
static const cmsUInt32Number cimago_lcms_flags_nocache = cmsFLAGS_NOCACHE;
static const cmsUInt32Number cimago_lcms_flags_bpc = cmsFLAGS_BLACKPOINTCOMPENSATION;
static const cmsUInt32Number cimago_lcms_flags_copy_alpha = cmsFLAGS_COPY_ALPHA;
