// libcurl for Swift: curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt and curl_share_setopt are variadic,
// which Swift cannot call, so each argument type gets a typed static inline wrapper here.
#include <curl/curl.h>
#include <sys/socket.h>
#include <netinet/in.h>

static inline CURLcode imago_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imago_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode imago_easy_setopt_string(CURL *h, CURLoption o, const char *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode imago_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
// A blob option (CURLOPT_CAINFO_BLOB, CURLOPT_SSLCERT_BLOB, CURLOPT_SSLKEY_BLOB): libcurl copies the bytes.
static inline CURLcode imago_easy_setopt_blob(CURL *h, CURLoption o, const void *data, size_t length) {
  struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
  return curl_easy_setopt(h, o, &blob);
}
static inline CURLcode imago_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) {
    return curl_easy_setopt(h, o, v);
}
static inline CURLcode imago_easy_setopt_share(CURL *h, CURLSH *v) { return curl_easy_setopt(h, CURLOPT_SHARE, v); }

typedef size_t (*imago_data_callback)(char *, size_t, size_t, void *);
static inline CURLcode imago_easy_setopt_writefunction(CURL *h, imago_data_callback f) {
    return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode imago_easy_setopt_headerfunction(CURL *h, imago_data_callback f) {
    return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f);
}
typedef curl_socket_t (*imago_opensocket_callback)(void *, curlsocktype, struct curl_sockaddr *);
static inline CURLcode imago_easy_setopt_opensocketfunction(CURL *h, imago_opensocket_callback f) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f);
}

static inline CURLcode imago_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imago_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imago_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode imago_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }

static inline CURLMcode imago_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

static inline CURLSHcode imago_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }

// Enum-like macros Swift does not import (they are defines or casts).
static const long imago_pipe_multiplex = CURLPIPE_MULTIPLEX;
static const long imago_http_version_2tls = CURL_HTTP_VERSION_2TLS;
static const long imago_http_version_1_1 = CURL_HTTP_VERSION_1_1;
static const long imago_http_version_2 = CURL_HTTP_VERSION_2_0;
static const long imago_http_version_3 = CURL_HTTP_VERSION_3;
static const long imago_http_version_2_prior_knowledge = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
static const curl_socket_t imago_socket_bad = CURL_SOCKET_BAD;
static const size_t imago_write_error = CURL_WRITEFUNC_ERROR;
static const long imago_global_all = CURL_GLOBAL_ALL;
static const long imago_sslversion_tls1_2 = CURL_SSLVERSION_TLSv1_2;
static const long imago_sslversion_tls1_3 = CURL_SSLVERSION_TLSv1_3;
static const long imago_sslversion_default = CURL_SSLVERSION_DEFAULT;
