// FFmpeg 5.1's libavcodec (Debian 12 libavcodec-dev), for Imago's libheif HEVC plugin (CHEIFPlugin).
#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
