#ifndef NETINSPECT_COPENSSL_SHIM_H
#define NETINSPECT_COPENSSL_SHIM_H

// The system's OpenSSL (libssl-dev), for the OTLP receiver's TLS: the same
// libssl.so.3 FoundationNetworking's libcurl already loads, so serving TLS
// compiles no TLS library of its own.
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

// What OpenSSL defines as macros, which Swift does not import as functions.
static inline int netinspect_ssl_ctx_set_min_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}
static inline void netinspect_ssl_ctx_refuse_renegotiation(SSL_CTX *context) {
    SSL_CTX_set_options(context, SSL_OP_NO_RENEGOTIATION);
}
static inline int netinspect_ssl_filetype_pem(void) { return SSL_FILETYPE_PEM; }
// An error the system gave OpenSSL (a file that cannot be opened) carries
// errno, not a reason OpenSSL can name: 0 for any other error.
static inline int netinspect_err_system_errno(unsigned long error) {
    return ERR_SYSTEM_ERROR(error) ? (int)(error & ERR_SYSTEM_MASK) : 0;
}

#endif
