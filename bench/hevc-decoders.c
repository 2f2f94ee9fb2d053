// libde265 vs libavcodec on the HEVC bitstream libheif hands its decoder plugin, single-threaded, CPU time per
// decode (BENCHMARKS.md, "HEIC through libavcodec"). Not part of the build:
//   gcc -O2 -o /tmp/hevc-decoders bench/hevc-decoders.c $(pkg-config --cflags --libs libheif libde265 libavcodec libavutil)
//   chrt -f 50 /tmp/hevc-decoders .build/bench-data/modern/photo12.heic 5
#include <libheif/heif.h>
#include <libheif/heif_plugin.h>
#include <libde265/de265.h>
#include <libavcodec/avcodec.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint8_t *cap; static size_t capSize;
static const char *name(void) { return "capture"; }
static int supports(enum heif_compression_format f) { return f == heif_compression_HEVC ? 10000 : 0; }
static struct heif_error ok(void) { struct heif_error e = {heif_error_Ok, 0, "ok"}; return e; }
static struct heif_error newd(void **d) { *d = (void *)1; capSize = 0; return ok(); }
static void freed(void *d) { (void)d; }
static struct heif_error push(void *d, const void *data, size_t size) {
  cap = realloc(cap, capSize + size); memcpy(cap + capSize, data, size); capSize += size; return ok(); }
static struct heif_error dec(void *d, struct heif_image **out) {
  *out = NULL; struct heif_error e = {heif_error_Decoder_plugin_error, 0, "captured"}; return e; }
static void strict(void *d, int f) {}
static const struct heif_decoder_plugin capture = {3, name, NULL, NULL, supports, newd, freed, push, dec, strict, "cap"};

static double cpu(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static uint8_t *planes[3]; static int planeW[3], planeH[3];  // libde265's first picture, 8-bit, for the check
static long mismatches = -1;

static long de265_once(void) {
  de265_decoder_context *ctx = de265_new_decoder();
  size_t at = 0;
  while (at + 4 <= capSize) {
    uint32_t n = (cap[at] << 24) | (cap[at + 1] << 16) | (cap[at + 2] << 8) | cap[at + 3]; at += 4;
    de265_push_NAL(ctx, cap + at, n, 0, NULL); at += n;
  }
  de265_flush_data(ctx);
  int more; long sum = 0;
  do { more = 0; if (de265_decode(ctx, &more) != DE265_OK) break;
    const struct de265_image *p = de265_get_next_picture(ctx);
    if (p) { int s; sum += de265_get_image_plane(p, 0, &s)[1000]; sum += de265_get_image_width(p, 0);
      for (int c = 0; c < 3 && !planes[2]; c++) {
        int w = de265_get_image_width(p, c), h = de265_get_image_height(p, c), st;
        const uint8_t *in = de265_get_image_plane(p, c, &st);
        planes[c] = malloc((size_t)w * h); planeW[c] = w; planeH[c] = h;
        for (int y = 0; y < h; y++) memcpy(planes[c] + (size_t)y * w, in + (size_t)y * st, w);
      }
      de265_release_next_picture(ctx); }
  } while (more);
  de265_free_decoder(ctx);
  return sum;
}

static uint8_t *annexb; static size_t annexbSize;
static long av_once(const AVCodec *codec) {
  AVCodecContext *c = avcodec_alloc_context3(codec);
  c->thread_count = 1;
  if (avcodec_open2(c, codec, NULL) < 0) { fprintf(stderr, "open\n"); exit(1); }
  AVPacket *pkt = av_packet_alloc(); AVFrame *f = av_frame_alloc();
  pkt->data = annexb; pkt->size = (int)annexbSize;
  long sum = 0;
  if (avcodec_send_packet(c, pkt) < 0) { fprintf(stderr, "send\n"); exit(1); }
  avcodec_send_packet(c, NULL);
  while (avcodec_receive_frame(c, f) == 0) {
    sum += f->data[0][1000] + f->width;
    if (mismatches < 0) {  // every sample of the three planes against libde265's
      mismatches = 0;
      for (int ch = 0; ch < 3; ch++)
        for (int y = 0; y < planeH[ch]; y++)
          for (int x = 0; x < planeW[ch]; x++)
            mismatches += f->data[ch][(size_t)y * f->linesize[ch] + x] != planes[ch][(size_t)y * planeW[ch] + x];
    }
    av_frame_unref(f);
  }
  av_frame_free(&f); av_packet_free(&pkt); avcodec_free_context(&c);
  return sum;
}

int main(int argc, char **argv) {
  int iters = argc > 2 ? atoi(argv[2]) : 5;
  struct heif_context *ctx = heif_context_alloc();
  heif_register_decoder(ctx, &capture);
  if (heif_context_read_from_file(ctx, argv[1], NULL).code) return 1;
  struct heif_image_handle *h; heif_context_get_primary_image_handle(ctx, &h);
  struct heif_image *img; heif_decode_image(h, &img, heif_colorspace_undefined, heif_chroma_undefined, NULL);
  // Annex B copy
  annexb = malloc(capSize * 2); size_t at = 0;
  while (at + 4 <= capSize) {
    uint32_t n = (cap[at] << 24) | (cap[at + 1] << 16) | (cap[at + 2] << 8) | cap[at + 3]; at += 4;
    memcpy(annexb + annexbSize, "\0\0\0\1", 4); memcpy(annexb + annexbSize + 4, cap + at, n); annexbSize += 4 + n; at += n;
  }
  memset(annexb + annexbSize, 0, 64);
  const AVCodec *codec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
  printf("%s: %zu bytes of HEVC; %d rounds each, alternating\n", argv[1], capSize, iters);
  long s1 = de265_once(), s2 = av_once(codec);
  printf("checksum de265 %ld avcodec %ld; samples that differ: %ld\n", s1, s2, mismatches);
  double tde = 0, tav = 0;
  for (int i = 0; i < iters; i++) {
    double t0 = cpu(); de265_once(); double t1 = cpu(); av_once(codec); double t2 = cpu();
    tde += t1 - t0; tav += t2 - t1;
  }
  printf("libde265 %s: %.2f ms CPU/decode\nlibavcodec %s: %.2f ms CPU/decode\nratio avcodec/de265 %.3f\n",
         de265_get_version(), 1000 * tde / iters, av_version_info(), 1000 * tav / iters, tav / tde);
  return 0;
}
