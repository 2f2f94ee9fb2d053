// FFmpeg 5.1's libavcodec headers (Debian 12 libavcodec-dev) for Imago's libheif HEVC plugin (CHEIFPlugin), which
// loads the libraries with dlopen on first use.
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
